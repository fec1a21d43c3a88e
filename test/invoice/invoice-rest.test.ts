import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { InvoiceResponse } from '../../src/modules/invoice/invoice.rest.ts';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { invoiceFixtures } from './fixtures.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

const INVOICE_FIELDS = [
  'id',
  'handle',
  'type',
  'status',
  'settlementStatus',
  'currency',
  'createdAt',
  'updatedAt',
  'customer',
  'memo',
  'date',
  'dueDate',
  'items',
  'settlements',
  'totalExclVat',
  'totalVat',
  'totalInclVat',
  'totalDue',
];
const ITEM_FIELDS = [
  'id',
  'quantity',
  'unitAmount',
  'sku',
  'title',
  'description',
  'periodStart',
  'periodEnd',
  'amount',
  'taxAmount',
  'tax',
  'discount',
];

describe('POST /invoices and GET /invoices/{invoiceId}', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment();
    customerId = await f.createCustomer(env, {
      handle: 'ada',
      currency: 'eur',
      paymentTerm: 'net30',
      billingAddress: {
        street1: '12 St James Square',
        city: 'London',
        postalCode: 'SW1Y 4JH',
        country: 'GB',
      },
    });
    await f.createTaxCode(env, 'VAT25', '25');
    await f.createTaxCode(env, 'VAT7.5', '7.5');
    await f.createProduct(env, {
      handle: 'support-hour',
      name: 'Support hour',
      description: 'One hour of support',
      taxCode: 'VAT25',
    });
  });

  it('creates a draft: 201, Location, and every contract field present', async () => {
    // when
    const response = await t.rest('POST', '/invoices', {
      env,
      body: {
        customerId,
        currency: 'usd',
        date: '2026-03-01',
        dueDate: '2026-03-31',
        memo: 'Thank you',
        items: [
          {
            quantity: 2,
            unitAmount: 12_500,
            sku: 'X-1',
            title: 'Consulting',
            description: 'March',
            periodStart: '2026-03-01',
            periodEnd: '2026-03-31',
            taxCode: 'VAT7.5',
            discount: { percentage: 10, amount: 100 },
          },
        ],
      },
    });

    // then
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/invoices/${response.body.id}`);
    expect(Object.keys(response.body)).toEqual(INVOICE_FIELDS);
    expect(Object.keys(response.body.items[0])).toEqual(ITEM_FIELDS);
    expect(InvoiceResponse.strict().safeParse(response.body).success).toBe(true);
    expect(response.body).toEqual({
      id: expect.any(String),
      handle: null,
      type: 'invoice',
      status: 'draft',
      settlementStatus: 'not_settled',
      currency: 'USD',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      updatedAt: null,
      customer: {
        id: customerId,
        handle: 'ada',
        name: 'Ada Lovelace',
        billingAddress: {
          street1: '12 St James Square',
          street2: null,
          postalCode: 'SW1Y 4JH',
          city: 'London',
          county: null,
          country: 'GB',
          state: null,
        },
      },
      memo: 'Thank you',
      date: '2026-03-01',
      dueDate: '2026-03-31',
      items: [
        {
          id: expect.any(String),
          quantity: 2,
          unitAmount: 12_500,
          sku: 'X-1',
          title: 'Consulting',
          description: 'March',
          periodStart: '2026-03-01',
          periodEnd: '2026-03-31',
          amount: 22_400,
          taxAmount: 1_680,
          tax: { taxable: true, taxCode: 'VAT7.5', taxRate: 7.5 },
          discount: { percentage: 10, amount: 100 },
        },
      ],
      settlements: [],
      totalExclVat: 22_400,
      totalVat: 1_680,
      totalInclVat: 24_080,
      totalDue: 24_080,
    });

    // and GET answers the same document
    const read = await t.rest('GET', `/invoices/${response.body.id}`, { env });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(response.body);
  });

  it("falls back to the customer's currency and net<N> term, and takes no items as none", async () => {
    const invoice = await f.createInvoice(env, {
      customerId,
      currency: null,
      date: '2026-01-31',
      items: null,
    });

    expect(invoice).toMatchObject({
      currency: 'EUR',
      dueDate: '2026-03-02',
      items: [],
      memo: null,
      totalExclVat: 0,
      totalInclVat: 0,
      totalDue: 0,
      settlementStatus: 'settled',
    });
  });

  it('has no due date when neither the request nor the customer gives one', async () => {
    const termless = await f.createCustomer(env, { name: 'No Terms' });
    const invoice = await f.createInvoice(env, { customerId: termless });
    expect(invoice.dueDate).toBeNull();
  });

  it('fills title, description and tax code of an item from the product its sku names', async () => {
    const invoice = await f.createInvoice(env, {
      customerId,
      items: [
        { quantity: 3, unitAmount: 9_000, sku: 'support-hour' },
        { quantity: 1, unitAmount: 9_000, sku: 'support-hour', title: 'Weekend support', taxCode: null },
        { quantity: 1, unitAmount: 100, sku: 'no-such-product', title: 'Sticker' },
      ],
    });

    expect(invoice.items.map((item: any) => [item.title, item.description, item.tax])).toEqual([
      ['Support hour', 'One hour of support', { taxable: true, taxCode: 'VAT25', taxRate: 25 }],
      ['Weekend support', 'One hour of support', { taxable: true, taxCode: 'VAT25', taxRate: 25 }],
      ['Sticker', null, { taxable: false, taxCode: null, taxRate: null }],
    ]);
    expect(invoice).toMatchObject({ totalExclVat: 36_100, totalVat: 9_000, totalInclVat: 45_100 });
  });

  it('keeps the rate an item was created with when the tax code changes later', async () => {
    const invoice = await f.createInvoice(env, {
      customerId,
      items: [{ quantity: 1, unitAmount: 1000, title: 'Book', taxCode: 'VAT25' }],
    });
    await t.sql("update tax_code set rate = 30 where environment_id = $1 and code = 'VAT25'", [env.id]);
    try {
      const read = await t.rest('GET', `/invoices/${invoice.id}`, { env });
      expect(read.body.items[0]).toMatchObject({ taxAmount: 250, tax: { taxRate: 25 } });
    } finally {
      await t.sql("update tax_code set rate = 25 where environment_id = $1 and code = 'VAT25'", [env.id]);
    }
  });

  it('ignores read-only response fields sent back as input', async () => {
    const invoice = await f.createInvoice(env, {
      customerId,
      id: randomUUID(),
      handle: 'INV-999999',
      settlements: [{ amount: 1 }],
      totalExclVat: 1,
      totalVat: 1,
      totalInclVat: 1,
      totalDue: 1,
    });
    expect(invoice).toMatchObject({ handle: null, settlements: [], totalDue: 0 });
  });

  describe('refuses', () => {
    const post = (body: Record<string, unknown>) =>
      t.rest('POST', '/invoices', {
        env,
        body: { customerId, currency: null, date: '2026-03-01', items: null, ...body },
      });
    const item = { quantity: 1, unitAmount: 100, title: 'Thing' };

    it.each([
      ['a memo over 400 characters', { memo: 'x'.repeat(401) }, '/memo'],
      ['a date that is not a date', { date: '2026-02-30' }, '/date'],
      ['a date in year 0', { date: '0000-12-31' }, '/date'],
      ['a due date before the date', { dueDate: '2026-02-28' }, '/dueDate'],
      ['an unknown currency', { currency: 'XYZ' }, '/currency'],
      ['a customerId that is not a UUID', { customerId: 'ada' }, '/customerId'],
      ['an unknown field', { discount: 5 }, '/discount'],
      ['an item without quantity', { items: [{ unitAmount: 1, title: 'x' }] }, '/items/0/quantity'],
      ['an item without title or product', { items: [{ quantity: 1, unitAmount: 1 }] }, '/items/0/title'],
      [
        'a period that ends before it starts',
        { items: [{ ...item, periodStart: '2026-03-02', periodEnd: '2026-03-01' }] },
        '/items/0/periodEnd',
      ],
      [
        'a discount that exceeds the line',
        { items: [item, { ...item, discount: { percentage: 50, amount: 51 } }] },
        '/items/1/discount',
      ],
      [
        'a percentage over 100',
        { items: [{ ...item, discount: { percentage: 101 } }] },
        '/items/0/discount/percentage',
      ],
      ['more than 6 decimals', { items: [{ ...item, quantity: 0.0000001 }] }, '/items/0/quantity'],
      [
        'more than 15 significant digits',
        { items: [{ ...item, unitAmount: 12_345_678_901_234.56 }] },
        '/items/0/unitAmount',
      ],
      [
        'a line amount beyond the int64 range kept exact',
        { items: [{ ...item, quantity: 999_999_999, unitAmount: 99_999_999 }] },
        '/items/0',
      ],
    ])('%s with 400 naming the field', async (_name, body, pointer) => {
      const response = await post(body);
      expectProblem(response, 400);
      expect(response.body.errors).toContainEqual({ pointer, detail: expect.any(String) });
    });

    it('more than 1,000 lines with 400 at /items, and takes 1,000', async () => {
      const full = await post({ items: Array.from({ length: 1000 }, () => item) });
      expect(full.status).toBe(201);
      expect(full.body.items).toHaveLength(1000);

      const response = await post({ items: Array.from({ length: 1001 }, () => item) });

      expectProblem(response, 400);
      expect(response.body.errors).toEqual([
        { pointer: '/items', detail: 'an invoice has at most 1000 lines' },
      ]);
    });

    it('a body without the currency and items keys as if they were null', async () => {
      const response = await t.rest('POST', '/invoices', { env, body: { customerId, date: '2026-03-01' } });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      expect(response.body).toMatchObject({ currency: 'EUR', items: [], totalInclVat: 0 });
    });

    it("another environment's customer with 422, as if it did not exist", async () => {
      const other = await t.createEnvironment('Other');
      const foreign = await f.createCustomer(other);
      for (const id of [foreign, randomUUID()]) {
        const response = await post({ customerId: id });
        expectProblem(response, 422);
        expect(response.body.errors).toEqual([{ pointer: '/customerId', detail: expect.any(String) }]);
      }
    });

    it('a missing currency when the customer has none with 422', async () => {
      const noCurrency = await f.createCustomer(env, { name: 'Cashless', currency: null });
      const response = await post({ customerId: noCurrency });
      expectProblem(response, 422);
      expect(response.body.errors).toEqual([{ pointer: '/currency', detail: expect.any(String) }]);
    });

    it('an unknown tax code with 422, and stores nothing', async () => {
      const before = await t.sql('select id from invoice where environment_id = $1', [env.id]);
      const response = await post({ items: [item, { ...item, taxCode: 'VAT99' }] });
      expectProblem(response, 422);
      expect(response.body.errors).toEqual([{ pointer: '/items/1/taxCode', detail: expect.any(String) }]);
      expect(await t.sql('select id from invoice where environment_id = $1', [env.id])).toEqual(before);
    });
  });

  it("answers 404 for an unknown invoice and for another environment's", async () => {
    const invoice = await f.createInvoice(env, { customerId });
    const other = await t.createEnvironment('Elsewhere');

    expectProblem(await t.rest('GET', `/invoices/${randomUUID()}`, { env }), 404);
    expectProblem(await t.rest('GET', `/invoices/${invoice.id}`, { env: other }), 404);
    expectProblem(await t.rest('GET', '/invoices/not-a-uuid', { env }), 400);
  });
});
