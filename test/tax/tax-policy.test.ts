import { beforeAll, describe, expect, it } from 'vitest';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { billingFixtures, midnight } from '../subscription/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);
const billing = billingFixtures(t);

const INVOICE = `id status totalExclVat totalVat totalInclVat taxRounding taxExempt taxNote
  items { amount taxAmount taxBehavior tax { taxCode taxRate } }
  taxBreakdown { taxCode taxRate taxBehavior taxableAmount taxAmount category exemptionReasonCode exemptionReason }`;

const CUSTOMER = 'id taxExempt taxIds { type value }';

async function setRounding(env: TestEnvironment, taxRounding: 'document' | 'line') {
  const data = await f.gql(
    env,
    `mutation ($input: EnvironmentUpdateInput!) {
      environmentUpdate(input: $input) { environment { taxRounding } userErrors { field message code } }
    }`,
    { input: { taxRounding } },
  );
  expect(data.environmentUpdate).toEqual({ environment: { taxRounding }, userErrors: [] });
}

async function createInvoice(env: TestEnvironment, customerId: string, items: Record<string, unknown>[]) {
  const data = await f.gql(
    env,
    `mutation ($input: InvoiceCreateInput!) {
      invoiceCreate(input: $input) { invoice { ${INVOICE} } userErrors { field message code } }
    }`,
    { input: { customerId, date: '2026-03-01', items } },
  );
  expect(data.invoiceCreate.userErrors).toEqual([]);
  return data.invoiceCreate.invoice;
}

async function book(env: TestEnvironment, id: string) {
  const data = await f.gql(
    env,
    `mutation ($id: UUID!) { invoiceBook(id: $id) { invoice { ${INVOICE} } userErrors { field message code } } }`,
    { id },
  );
  expect(data.invoiceBook.userErrors).toEqual([]);
  return data.invoiceBook.invoice;
}

async function readInvoice(env: TestEnvironment, id: string) {
  return (await f.gql(env, `query ($id: UUID!) { invoice(id: $id) { ${INVOICE} } }`, { id })).invoice;
}

async function customerMutation(env: TestEnvironment, input: Record<string, unknown>, id?: string) {
  const data = id
    ? await f.gql(
        env,
        `mutation ($id: UUID!, $input: CustomerUpdateInput!) {
          customerUpdate(id: $id, input: $input) { customer { ${CUSTOMER} } userErrors { field message code } }
        }`,
        { id, input },
      )
    : await f.gql(
        env,
        `mutation ($input: CustomerCreateInput!) {
          customerCreate(input: $input) { customer { ${CUSTOMER} } userErrors { field message code } }
        }`,
        { input: { name: 'Acme GmbH', currency: 'EUR', ...input } },
      );
  return id ? data.customerUpdate : data.customerCreate;
}

const fiveHundredDimes = () =>
  Array.from({ length: 500 }, () => ({ quantity: 1, unitAmount: 10, title: 'Call', taxCode: 'R7.5' }));

describe('tax rounding per environment', () => {
  let env: TestEnvironment;
  let other: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment('Taxes');
    other = await t.createEnvironment('Other');
    customerId = await f.createCustomer(env);
    await f.createTaxCode(env, 'R7.5', '7.5');
    await f.createTaxCode(env, 'R19', '19');
    await f.createTaxCode(env, 'R7', '7');
  });

  it('defaults to document and is changed through GraphQL for the request’s environment only', async () => {
    const read = async (e: TestEnvironment) =>
      (await f.gql(e, '{ environment { taxRounding } }')).environment;
    expect(await read(env)).toEqual({ taxRounding: 'document' });

    await setRounding(env, 'line');

    expect(await read(env)).toEqual({ taxRounding: 'line' });
    expect(await read(other)).toEqual({ taxRounding: 'document' });
    const rows = await t.sql<{ id: string; tax_rounding: string }>(
      'select id, tax_rounding from environment where id = any($1) order by name',
      [[env.id, other.id]],
    );
    expect(rows.map((row) => row.tax_rounding)).toEqual(['document', 'line']);
    await setRounding(env, 'document');
  });

  it('refuses the change to a read-only token and keeps the setting', async () => {
    const reader = await t.createEnvironment('Read only', { scope: 'read' });
    const response = await t.graphql(
      'mutation { environmentUpdate(input: { taxRounding: line }) { userErrors { code } } }',
      {},
      { env: reader },
    );
    expect(response.status).toBe(403);
    const [row] = await t.sql<{ tax_rounding: string }>(
      'select tax_rounding from environment where id = $1',
      [reader.id],
    );
    expect(row?.tax_rounding).toBe('document');
  });

  it('500 lines of €0.10 at 7.5 %: VAT €3.75 per document, €5.00 per line; booked invoices keep theirs', async () => {
    // given an invoice booked under document rounding and a draft made under it
    const booked = await book(env, (await createInvoice(env, customerId, fiveHundredDimes())).id);
    const draft = await createInvoice(env, customerId, fiveHundredDimes());
    expect(booked).toMatchObject({
      totalExclVat: 5000,
      totalVat: 375,
      totalInclVat: 5375,
      taxRounding: 'document',
    });
    expect(draft).toMatchObject({ totalVat: 375, taxRounding: 'document' });
    expect(booked.taxBreakdown).toEqual([
      expect.objectContaining({
        taxCode: 'R7.5',
        taxRate: 7.5,
        taxableAmount: 5000,
        taxAmount: 375,
        category: 'S',
      }),
    ]);

    // when the environment switches to per-line rounding
    await setRounding(env, 'line');
    const fresh = await createInvoice(env, customerId, fiveHundredDimes());

    // then new invoices round per line, the draft takes the new rule when booked, the booked one stays
    expect(fresh).toMatchObject({ totalVat: 500, taxRounding: 'line' });
    expect(await book(env, draft.id)).toMatchObject({ totalVat: 500, taxRounding: 'line' });
    expect(await readInvoice(env, booked.id)).toMatchObject({ totalVat: 375, taxRounding: 'document' });
    const [stored] = await t.sql<{ vat: string }>(
      'select sum(tax_amount)::text as vat from invoice_item where invoice_id = $1',
      [booked.id],
    );
    expect(stored?.vat).toBe('375');
    await setRounding(env, 'document');
  });

  it('re-spreads a group’s VAT over its lines when a draft line changes', async () => {
    // given 3 lines of 10 cents at 7.5 % (0.75 each: 2.25 rounds to 2, given to the first two lines)
    const draft = await createInvoice(env, customerId, fiveHundredDimes().slice(0, 3));
    expect(draft.items.map((item: { taxAmount: number }) => item.taxAmount)).toEqual([1, 1, 0]);

    // when a fourth line is added (3.00 exactly)
    const data = await f.gql(
      env,
      `mutation ($invoiceId: UUID!, $input: InvoiceItemInput!) {
        invoiceItemAdd(invoiceId: $invoiceId, input: $input) { invoice { ${INVOICE} } userErrors { code } }
      }`,
      { invoiceId: draft.id, input: fiveHundredDimes()[0] },
    );

    // then every line carries its share again
    expect(data.invoiceItemAdd.invoice.items.map((item: { taxAmount: number }) => item.taxAmount)).toEqual([
      1, 1, 1, 0,
    ]);
    expect(data.invoiceItemAdd.invoice.totalVat).toBe(3);
  });

  it('inclusive €9.99 at 19 %: net €8.39, VAT €1.60', async () => {
    const invoice = await createInvoice(env, customerId, [
      { quantity: 1, unitAmount: 999, title: 'Ebook', taxCode: 'R19', taxBehavior: 'inclusive' },
    ]);
    expect(invoice).toMatchObject({ totalExclVat: 839, totalVat: 160, totalInclVat: 999 });
    expect(invoice.items).toEqual([
      { amount: 839, taxAmount: 160, taxBehavior: 'inclusive', tax: { taxCode: 'R19', taxRate: 19 } },
    ]);
    // REST shows the contract's fields: the net and tax, nothing more
    const rest = await t.rest('GET', `/invoices/${invoice.id}`, { env });
    expect(rest.body.items[0]).toMatchObject({ amount: 839, taxAmount: 160 });
    expect(rest.body.items[0]).not.toHaveProperty('taxBehavior');
  });

  it('switches a draft line between exclusive and inclusive; null goes back to exclusive', async () => {
    const draft = await createInvoice(env, customerId, [
      { quantity: 1, unitAmount: 999, title: 'Ebook', taxCode: 'R19' },
    ]);
    const [line] = await t.sql<{ id: string }>('select id from invoice_item where invoice_id = $1', [
      draft.id,
    ]);
    const update = async (taxBehavior: string | null) =>
      (
        await f.gql(
          env,
          `mutation ($id: UUID!, $input: InvoiceItemUpdateInput!) {
            invoiceItemUpdate(id: $id, input: $input) { invoice { ${INVOICE} } userErrors { code } }
          }`,
          { id: line?.id, input: { taxBehavior } },
        )
      ).invoiceItemUpdate.invoice;

    expect(draft).toMatchObject({ totalExclVat: 999, totalVat: 190, totalInclVat: 1189 });
    expect(await update('inclusive')).toMatchObject({ totalExclVat: 839, totalVat: 160, totalInclVat: 999 });
    expect(await update(null)).toMatchObject({
      totalExclVat: 999,
      totalVat: 190,
      items: [{ taxBehavior: 'exclusive' }],
    });
  });

  it('keeps POST /invoices to the contract’s item fields', async () => {
    const response = await t.rest('POST', '/invoices', {
      env,
      body: {
        customerId,
        currency: null,
        date: '2026-03-01',
        items: [{ quantity: 1, unitAmount: 999, title: 'Ebook', taxBehavior: 'inclusive' }],
      },
    });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([expect.objectContaining({ pointer: '/items/0/taxBehavior' })]);
  });

  it('a mixed-rate invoice: per-rate totals as computed by hand', async () => {
    // given 19 %: 1001 + 333 cents; 7 %: 2 × 999.5 = 1999; untaxed: 250; 19 % inclusive: 1190
    const invoice = await createInvoice(env, customerId, [
      { quantity: 1, unitAmount: 1000.5, title: 'A', taxCode: 'R19' },
      { quantity: 1, unitAmount: 333, title: 'B', taxCode: 'R19' },
      { quantity: 2, unitAmount: 999.5, title: 'C', taxCode: 'R7' },
      { quantity: 1, unitAmount: 250, title: 'Fee' },
      { quantity: 1, unitAmount: 1190, title: 'D', taxCode: 'R19', taxBehavior: 'inclusive' },
    ]);

    // then 19 %: 1334 × 0.19 = 253.46 → 253; 7 %: 1999 × 0.07 = 139.93 → 140;
    // inclusive 19 %: 1190 × 19 / 119 = 190 of VAT, 1000 net; untaxed 250
    expect(invoice.taxBreakdown).toEqual([
      {
        taxCode: 'R7',
        taxRate: 7,
        taxBehavior: 'exclusive',
        taxableAmount: 1999,
        taxAmount: 140,
        category: 'S',
        exemptionReasonCode: null,
        exemptionReason: null,
      },
      {
        taxCode: 'R19',
        taxRate: 19,
        taxBehavior: 'exclusive',
        taxableAmount: 1334,
        taxAmount: 253,
        category: 'S',
        exemptionReasonCode: null,
        exemptionReason: null,
      },
      {
        taxCode: 'R19',
        taxRate: 19,
        taxBehavior: 'inclusive',
        taxableAmount: 1000,
        taxAmount: 190,
        category: 'S',
        exemptionReasonCode: null,
        exemptionReason: null,
      },
      {
        taxCode: null,
        taxRate: null,
        taxBehavior: 'exclusive',
        taxableAmount: 250,
        taxAmount: 0,
        category: 'O',
        exemptionReasonCode: 'VATEX-EU-O',
        exemptionReason: 'Not subject to VAT',
      },
    ]);
    expect(invoice).toMatchObject({ totalExclVat: 4583, totalVat: 583, totalInclVat: 5166 });
  });
});

describe('customer tax identity', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment('Identity');
    await f.createTaxCode(env, 'DE19', '19');
  });

  it('stores tax ids normalised and refuses a malformed one naming its field, writing nothing', async () => {
    const created = await customerMutation(env, { taxIds: [{ type: 'eu_vat', value: 'de 123.456-789' }] });
    expect(created).toEqual({
      customer: {
        id: expect.any(String),
        taxExempt: 'none',
        taxIds: [{ type: 'eu_vat', value: 'DE123456789' }],
      },
      userErrors: [],
    });

    const before = await t.sql('select count(*)::int as n from customer where environment_id = $1', [env.id]);
    const refused = await customerMutation(env, {
      taxIds: [
        { type: 'eu_vat', value: 'FR12345678901' },
        { type: 'eu_vat', value: 'DE12345678' },
        { type: 'eu_vat', value: 'GR123456789' },
        { type: 'gb_vat', value: 'GB12345' },
      ],
    });
    expect(refused.customer).toBeNull();
    expect(refused.userErrors).toEqual([
      {
        field: ['input', 'taxIds', '1', 'value'],
        message: 'is not in the format of a DE VAT number',
        code: 'INVALID_INPUT',
      },
      {
        field: ['input', 'taxIds', '2', 'value'],
        message: 'Greek VAT numbers start with EL, not GR',
        code: 'INVALID_INPUT',
      },
      {
        field: ['input', 'taxIds', '3', 'value'],
        message: expect.stringContaining('UK VAT number'),
        code: 'INVALID_INPUT',
      },
    ]);
    expect(
      await t.sql('select count(*)::int as n from customer where environment_id = $1', [env.id]),
    ).toEqual(before);
  });

  it('refuses the same tax id twice, and reverse charge without an EU VAT number', async () => {
    const twice = await customerMutation(env, {
      taxIds: [
        { type: 'eu_vat', value: 'ATU12345678' },
        { type: 'eu_vat', value: 'atu 12345678' },
      ],
    });
    expect(twice.userErrors).toEqual([
      {
        field: ['input', 'taxIds', '1', 'value'],
        message: 'is already among the tax ids',
        code: 'INVALID_INPUT',
      },
    ]);

    const created = await customerMutation(env, { taxIds: [{ type: 'gb_vat', value: 'GB123456789' }] });
    const refused = await customerMutation(env, { taxExempt: 'reverse_charge' }, created.customer.id);
    expect(refused).toEqual({
      customer: null,
      userErrors: [
        { field: ['input', 'taxExempt'], message: expect.stringContaining('eu_vat'), code: 'INVALID_INPUT' },
      ],
    });
    const [row] = await t.sql<{ tax_exempt: string }>('select tax_exempt from customer where id = $1', [
      created.customer.id,
    ]);
    expect(row?.tax_exempt).toBe('none');
  });

  it('leaves REST’s customer as the contract has it', async () => {
    const created = await customerMutation(env, { taxIds: [{ type: 'eu_vat', value: 'NL123456789B01' }] });
    const read = await t.rest('GET', `/customers/${created.customer.id}`, { env });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('taxIds');
    expect(read.body).not.toHaveProperty('taxExempt');
    const patched = await t.rest('PATCH', `/customers/${created.customer.id}`, {
      env,
      body: { name: 'Renamed', taxExempt: 'exempt' },
    });
    expect(patched.status).toBe(400);
  });

  it('bills a reverse-charge customer at 0 % with the Article 196 note, an exempt one with its note', async () => {
    // given a reverse-charge customer and an exempt one
    const reverse = await customerMutation(env, {
      taxIds: [{ type: 'eu_vat', value: 'FR12345678901' }],
      taxExempt: 'reverse_charge',
    });
    const exempt = await customerMutation(env, { taxExempt: 'exempt' });
    const items = [
      { quantity: 1, unitAmount: 10000, title: 'Consulting', taxCode: 'DE19' },
      { quantity: 1, unitAmount: 500, title: 'Travel' },
    ];

    // when each is invoiced
    const rc = await book(env, (await createInvoice(env, reverse.customer.id, items)).id);
    const ex = await createInvoice(env, exempt.customer.id, items);

    // then every taxable line is at 0 % and the invoice and its breakdown carry the note
    expect(rc).toMatchObject({
      totalExclVat: 10500,
      totalVat: 0,
      taxExempt: 'reverse_charge',
      taxNote:
        'Reverse charge: VAT to be accounted for by the recipient (Article 196, Council Directive 2006/112/EC)',
    });
    expect(rc.items[0]).toMatchObject({ taxAmount: 0, tax: { taxCode: 'DE19', taxRate: 0 } });
    expect(rc.taxBreakdown[0]).toEqual({
      taxCode: 'DE19',
      taxRate: 0,
      taxBehavior: 'exclusive',
      taxableAmount: 10000,
      taxAmount: 0,
      category: 'AE',
      exemptionReasonCode: 'VATEX-EU-AE',
      exemptionReason: rc.taxNote,
    });
    expect(ex).toMatchObject({ totalVat: 0, taxExempt: 'exempt', taxNote: 'Exempt from VAT' });
    expect(ex.taxBreakdown[0]).toMatchObject({
      category: 'E',
      exemptionReason: 'Exempt from VAT',
      taxRate: 0,
    });

    // and when the exempt customer is no longer exempt, its draft is taxed again when booked;
    // the booked reverse-charge invoice stays as it was
    await customerMutation(env, { taxExempt: 'none' }, exempt.customer.id);
    await customerMutation(env, { taxExempt: 'none' }, reverse.customer.id);
    const rebooked = await book(env, ex.id);
    expect(rebooked).toMatchObject({ totalVat: 1900, taxExempt: 'none', taxNote: null });
    expect(rebooked.items[0]).toMatchObject({ taxAmount: 1900, tax: { taxRate: 19 } });
    expect(await readInvoice(env, rc.id)).toMatchObject({ totalVat: 0, taxExempt: 'reverse_charge' });
  });
});

describe('tax-inclusive prices', () => {
  it('carries a price’s taxBehavior onto the lines a billing run makes', async () => {
    // given an environment with a 19 % product sold at a gross €9.99 a month
    const env = await t.createEnvironment('Shop');
    await f.createTaxCode(env, 'VAT', '19');
    const product = await billing.createProduct(env, { name: 'Ebooks', handle: 'ebooks', taxCode: 'VAT' });
    const created = await f.gql(
      env,
      `mutation ($input: PriceCreateInput!) { priceCreate(input: $input) { price { id taxBehavior } userErrors { code } } }`,
      {
        input: {
          name: 'Monthly',
          termUnit: 'month',
          termCount: 1,
          purchase: 'recurring',
          priceModel: 'fee',
          method: 'advance',
          pricing: { eur: { amount: 999 } },
          taxBehavior: 'inclusive',
        },
      },
    );
    const price = created.priceCreate.price;
    expect(price.taxBehavior).toBe('inclusive');
    // a REST PUT, which cannot name it, leaves it as it is
    const put = await t.rest('PUT', `/prices/${price.id}`, {
      env,
      body: {
        name: 'Monthly',
        termUnit: 'month',
        termCount: 1,
        priceModel: 'fee',
        pricing: { eur: { amount: 999 } },
      },
    });
    expect(put.status).toBe(200);
    expect(put.body).not.toHaveProperty('taxBehavior');
    const customerId = await billing.createCustomer(env);
    await billing.subscribe(env, {
      customerId,
      term: { start: '2026-01-01' },
      items: [{ productId: product.id, priceId: price.id, quantity: 1 }],
    });

    // when a run bills the first month
    await billing.runBilling(env, midnight('2026-01-01'));

    // then the line is inclusive: the customer pays €9.99, of which €1.60 VAT
    const [invoice] = await billing.invoicesOf(env, customerId);
    expect(await readInvoice(env, invoice.id)).toMatchObject({
      status: 'booked',
      totalExclVat: 839,
      totalVat: 160,
      totalInclVat: 999,
      items: [{ amount: 839, taxAmount: 160, taxBehavior: 'inclusive' }],
    });
  });
});
