import { beforeAll, describe, expect, it } from 'vitest';
import { priceAmount } from '../../src/modules/price/pricing.ts';
import { billingFixtures, midnight, type PriceInput } from '../subscription/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = billingFixtures(t);

const TERM = { start: '2026-01-01' };

describe('what a billing run bills', () => {
  let env: TestEnvironment;
  let product: { id: string };

  beforeAll(async () => {
    env = await t.createEnvironment();
    await t.sql(
      `insert into tax_code (id, environment_id, code, rate, created_at) values (gen_random_uuid(), $1, 'VAT', 20, now())`,
      [env.id],
    );
    product = await f.createProduct(env, { name: 'API', handle: 'api', taxCode: 'VAT' });
  });

  it('prices fee, volume, graduated and package items with the pricing functions, exactly', async () => {
    // given one subscription with an item of every model (and of awkward quantities)
    type Figures = [quantity: number, unitAmount: number, amount: number, description: string];
    const cases: { price: PriceInput; quantity: number; amount: number; lines: Figures[] }[] = [
      {
        price: { priceModel: 'fee', pricing: { eur: { amount: 1999 } } },
        quantity: 3,
        amount: 5997,
        lines: [[3, 1999, 5997, 'Model 0']],
      },
      // 1001 x 0.25 = 250.25: rounded once, and billed as one unit of 250
      {
        price: { priceModel: 'fee', pricing: { eur: { amount: 0.25 } } },
        quantity: 1001,
        amount: 250,
        lines: [[1, 250, 250, 'Model 1, quantity 1001']],
      },
      {
        price: {
          priceModel: 'volume',
          pricing: {
            eur: {
              tiers: [
                { upTo: 10, unitAmount: 500 },
                { upTo: null, unitAmount: 400 },
              ],
            },
          },
        },
        quantity: 12,
        amount: 4800,
        lines: [[12, 400, 4800, 'Model 2, tier 2, over 10']],
      },
      {
        price: {
          priceModel: 'volume',
          pricing: {
            eur: {
              tiers: [
                { upTo: 10, unitAmount: 500 },
                { upTo: null, unitAmount: 400, flatAmount: 100 },
              ],
            },
          },
        },
        quantity: 12,
        amount: 4900,
        lines: [
          [12, 400, 4800, 'Model 3, tier 2, over 10'],
          [1, 100, 100, 'Model 3, tier 2 flat amount'],
        ],
      },
      {
        price: {
          priceModel: 'graduated',
          pricing: {
            eur: {
              tiers: [
                { upTo: 10, unitAmount: 500, flatAmount: 1000 },
                { upTo: null, unitAmount: 400 },
              ],
            },
          },
        },
        quantity: 12,
        amount: 6800,
        lines: [
          [10, 500, 5000, 'Model 4, tier 1, up to 10'],
          [1, 1000, 1000, 'Model 4, tier 1 flat amount'],
          [2, 400, 800, 'Model 4, tier 2, over 10'],
        ],
      },
      {
        price: { priceModel: 'package', pricing: { eur: { amount: 1000, packageSize: 100 } } },
        quantity: 250,
        amount: 3000,
        lines: [[3, 1000, 3000, 'Model 5, packages of 100 (quantity 250)']],
      },
    ];
    const customer = await f.createCustomer(env, { name: 'Models' });
    const items = [];
    for (const [index, { price }] of cases.entries()) {
      const created = await f.createPrice(env, { ...price, name: `Model ${index}` });
      items.push({ productId: product.id, priceId: created.id, quantity: cases[index]?.quantity });
    }
    await f.subscribe(env, { customerId: customer, term: TERM, items });

    // when a run bills the first period
    await f.runBilling(env, midnight('2026-01-01'));

    // then every period bills the amount its pricing function gives, in lines of quantity x unitAmount
    const [invoice] = await f.invoicesOf(env, customer);
    const expected = cases.flatMap(({ lines }) => lines);
    expect(invoice.items).toHaveLength(expected.length);
    for (const { price, quantity, amount, lines } of cases) {
      expect(priceAmount(price.priceModel as never, price.pricing.eur as never, quantity)).toBe(amount);
      expect(lines.reduce((sum, line) => sum + line[2], 0)).toBe(amount);
    }
    expected.forEach(([quantity, unitAmount, amount, description], index) => {
      expect(invoice.items[index]).toMatchObject({
        quantity,
        unitAmount,
        amount,
        taxAmount: Math.round(amount * 0.2),
        sku: 'api',
        title: 'API',
        description,
        periodStart: '2026-01-01',
        periodEnd: '2026-02-01',
        tax: { taxCode: 'VAT', taxRate: 20 },
      });
    });
    const total = cases.reduce((sum, { amount }) => sum + amount, 0);
    expect(invoice).toMatchObject({ status: 'booked', totalExclVat: total });
    const ledger = await t.sql<{ amount: string }>(
      'select amount from billed_period where invoice_id = $1 order by subscription_item_id',
      [invoice.id],
    );
    expect(ledger.map((row) => Number(row.amount))).toEqual(cases.map((c) => c.amount));
  });

  it('keeps drafts for customers collecting by draft invoice, and makes one invoice per currency', async () => {
    // given a draft-invoice customer with a EUR and a USD subscription
    const customer = await f.createCustomer(env, { name: 'Drafts', collectionMode: 'draft_invoice' });
    const price = await f.createPrice(env, { pricing: { eur: { amount: 100 }, usd: { amount: 120 } } });
    for (const currency of ['EUR', 'USD']) {
      await f.subscribe(env, {
        customerId: customer,
        currency,
        term: TERM,
        items: [{ productId: product.id, priceId: price.id }],
      });
    }

    // when a run bills January
    const run = await f.runBilling(env, midnight('2026-01-01'));

    // then two drafts exist, one per currency
    const invoices = await f.invoicesOf(env, customer);
    expect(
      invoices.map((invoice: { currency: string; status: string; handle: string | null }) => [
        invoice.currency,
        invoice.status,
        invoice.handle,
        (invoice as unknown as { totalExclVat: number }).totalExclVat,
      ]),
    ).toEqual([
      ['EUR', 'draft', null, 100],
      ['USD', 'draft', null, 120],
    ]);
    expect(run.invoiceIds).toEqual(
      expect.arrayContaining(invoices.map((invoice: { id: string }) => invoice.id)),
    );
  });

  it('bills usage summed per period in arrears, and a period without usage as nothing', async () => {
    // given an event-based item at a quarter cent per call, with January usage
    const customer = await f.createCustomer(env, { name: 'Usage' });
    const price = await f.createPrice(env, {
      name: 'Calls',
      method: 'event_based',
      pricing: { eur: { amount: 0.25 } },
    });
    const subscription = await f.subscribe(env, {
      customerId: customer,
      term: TERM,
      items: [{ productId: product.id, priceId: price.id }],
    });
    const item = subscription.items[0].id;
    for (const [key, quantity, timestamp] of [
      ['a', 100, '2026-01-01T00:00:00Z'],
      ['b', 200.5, '2026-01-20T10:00:00Z'],
      ['c', 0.5, '2026-01-31T23:59:59.999Z'],
      ['a', 100, '2026-01-01T00:00:00Z'],
    ] as const) {
      const recorded = await f.tryRecordUsage(env, {
        subscriptionItemId: item,
        quantity,
        timestamp,
        idempotencyKey: key,
      });
      expect(recorded.userErrors).toEqual([]);
    }

    // when runs are made as January ends and as February ends
    const january = await f.runBilling(env, midnight('2026-02-01'));
    const february = await f.runBilling(env, midnight('2026-03-01'));

    // then January bills 301 calls (75.25 cents, 75) and February, without usage, no invoice
    const invoices = await f.invoicesOf(env, customer);
    expect(invoices).toHaveLength(1);
    expect(invoices[0].items).toEqual([
      expect.objectContaining({
        quantity: 1,
        unitAmount: 75,
        amount: 75,
        description: 'Calls, quantity 301',
        periodStart: '2026-01-01',
        periodEnd: '2026-02-01',
      }),
    ]);
    expect(january.invoiceIds).toContain(invoices[0].id);
    expect(february.invoiceIds).not.toContain(invoices[0].id);
    const ledger = await t.sql(
      'select period_start::text, quantity::float as quantity, amount::int, invoice_id is not null as invoiced from billed_period where subscription_item_id = $1 order by period_start',
      [item],
    );
    expect(ledger).toEqual([
      { period_start: '2026-01-01', quantity: 301, amount: 75, invoiced: true },
      { period_start: '2026-02-01', quantity: 0, amount: 0, invoiced: false },
    ]);
  });

  it('records a customer it cannot bill, bills the others, and bills that customer once it can', async () => {
    // given two customers, one on a price that lost its EUR pricing after the subscription was made
    const fine = await f.createCustomer(env, { name: 'Fine' });
    const broken = await f.createCustomer(env, { name: 'Broken' });
    const good = await f.createPrice(env, { pricing: { eur: { amount: 500 } } });
    const losing = await f.losingPrice(env);
    const term = { start: '2026-05-01' };
    await f.subscribe(env, { customerId: fine, term, items: [{ productId: product.id, priceId: good.id }] });
    const brokenSubscription = await f.subscribe(env, {
      customerId: broken,
      handle: 'broken',
      term,
      items: [{ productId: product.id, priceId: losing.id }],
    });
    await losing.lose();

    // when a run is made
    const run = await f.runBilling(env, midnight('2026-05-01'));

    // then it fails for that customer only, who keeps the item due
    expect(run.status).toBe('failed');
    expect(run.errors).toEqual([
      {
        customerId: broken,
        message: `price "Losing" (${losing.id}) of subscription broken has no pricing in EUR`,
      },
    ]);
    expect(await f.invoicesOf(env, fine)).toHaveLength(1);
    expect(await f.invoicesOf(env, broken)).toHaveLength(0);
    const read = await t.rest('GET', `/subscriptions/${brokenSubscription.id}`, { env });
    expect(read.body.items[0].billAt).toBe(midnight('2026-05-01'));

    // and once the price has EUR pricing again, the next run bills it
    await losing.regain(800);
    const retry = await f.runBilling(env, midnight('2026-05-01'));
    expect(retry).toMatchObject({ status: 'succeeded', invoiceCount: 1, periodCount: 1 });
    const [invoice] = await f.invoicesOf(env, broken);
    expect(invoice.totalExclVat).toBe(800);
  });
});
