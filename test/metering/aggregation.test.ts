import { beforeAll, describe, expect, it } from 'vitest';
import { billingFixtures } from '../subscription/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { type EventBody, meteringFixtures, txn } from './fixtures.ts';

const t = setupTestApp();
const billing = billingFixtures(t);
const metering = meteringFixtures(t);

let env: TestEnvironment;
let customer: string;
/** Subscription item id by metric code. */
const items = new Map<string, string>();

/** 10.00 EUR per unit of usage, billed in arrears each calendar month from 2026-01-01. */
const UNIT = 1000;

const event = (metric: string, timestamp: string, properties?: Record<string, unknown>): EventBody => ({
  transactionId: txn(metric),
  customer,
  metric,
  timestamp,
  ...(properties ? { properties } : {}),
});

const METRICS = [
  { code: 'calls-eu', aggregation: 'count', filters: { region: 'eu' } },
  { code: 'gb-sum', aggregation: 'sum', fieldName: 'gb', rounding: 'ceil', roundingDecimals: 0 },
  { code: 'gb-sum-exact', aggregation: 'sum', fieldName: 'gb' },
  { code: 'peak', aggregation: 'max', fieldName: 'level' },
  { code: 'users', aggregation: 'unique_count', fieldName: 'user' },
  { code: 'last', aggregation: 'latest', fieldName: 'level' },
  { code: 'seats', aggregation: 'weighted_sum', fieldName: 'delta' },
  {
    code: 'seats-2',
    aggregation: 'weighted_sum',
    fieldName: 'delta',
    rounding: 'round',
    roundingDecimals: 2,
  },
];

beforeAll(async () => {
  env = await t.createEnvironment('Metering');
  customer = await billing.createCustomer(env, { handle: 'acme' });
  const product = await billing.createProduct(env, { name: 'Usage' });
  const price = await billing.createPrice(env, {
    name: 'Per unit',
    method: 'event_based',
    pricing: { eur: { amount: UNIT } },
  });
  for (const metric of METRICS) await metering.createMetric(env, metric);
  const subscription = await billing.subscribe(env, {
    customerId: customer,
    term: { start: '2026-01-01' },
    items: METRICS.map((metric) => ({ productId: product.id, priceId: price.id, metricCode: metric.code })),
  });
  subscription.items.forEach((item: { id: string }, index: number) => {
    items.set(METRICS[index]?.code as string, item.id);
  });

  const batch = await metering.ingestOk(env, [
    // count with a filter: three eu calls in January (one by handle), a us call, an eu call in February
    event('calls-eu', '2026-01-02T10:00:00Z', { region: 'eu' }),
    event('calls-eu', '2026-01-15T10:00:00Z', { region: 'eu', path: '/x' }),
    { ...event('calls-eu', '2026-01-31T23:59:59.999Z', { region: 'eu' }), customer: 'acme' },
    event('calls-eu', '2026-01-20T10:00:00Z', { region: 'us' }),
    event('calls-eu', '2026-02-01T00:00:00Z', { region: 'eu' }),
    // sum: 1.5 + 2 + "3.25" = 6.75 in January (ceil: 7); 100 on the last day of December is not January's
    event('gb-sum', '2026-01-03T00:00:00Z', { gb: 1.5 }),
    event('gb-sum', '2026-01-04T00:00:00Z', { gb: 2 }),
    event('gb-sum', '2026-01-05T00:00:00Z', { gb: '3.25' }),
    event('gb-sum', '2025-12-31T23:59:59Z', { gb: 100 }),
    event('gb-sum-exact', '2026-01-03T00:00:00Z', { gb: 0.125 }),
    event('gb-sum-exact', '2026-01-04T00:00:00Z', { gb: 0.25 }),
    // max: 4, 10, 7 in January; 99 in February
    event('peak', '2026-01-06T00:00:00Z', { level: 4 }),
    event('peak', '2026-01-07T00:00:00Z', { level: 10 }),
    event('peak', '2026-01-08T00:00:00Z', { level: 7 }),
    event('peak', '2026-02-02T00:00:00Z', { level: 99 }),
    // unique_count: December c; January a, b, a, b (the last a millisecond before February); February a, d, e
    event('users', '2025-12-31T12:00:00Z', { user: 'c' }),
    event('users', '2026-01-02T00:00:00Z', { user: 'a' }),
    event('users', '2026-01-09T00:00:00Z', { user: 'b' }),
    event('users', '2026-01-10T00:00:00Z', { user: 'a' }),
    event('users', '2026-01-31T23:59:59.999Z', { user: 'b' }),
    event('users', '2026-02-01T00:00:00Z', { user: 'a' }),
    event('users', '2026-02-05T00:00:00Z', { user: 'd' }),
    event('users', '2026-02-28T23:59:59Z', { user: 'e' }),
    // latest: 7 on the 5th, 3 on the 20th (sent first), 9 on the 10th -> 3
    event('last', '2026-01-20T00:00:00Z', { level: 3 }),
    event('last', '2026-01-05T00:00:00Z', { level: 7 }),
    event('last', '2026-01-10T00:00:00Z', { level: 9 }),
    // weighted_sum: +2 in December carried in; +3 on 11 January; -1 on 21 January
    event('seats', '2025-12-20T00:00:00Z', { delta: 2 }),
    event('seats', '2026-01-11T00:00:00Z', { delta: 3 }),
    event('seats', '2026-01-21T00:00:00Z', { delta: -1 }),
    event('seats-2', '2025-12-20T00:00:00Z', { delta: 2 }),
    event('seats-2', '2026-01-11T00:00:00Z', { delta: 3 }),
    event('seats-2', '2026-01-21T00:00:00Z', { delta: -1 }),
  ]);
  expect(batch.rejected, JSON.stringify(batch.results)).toBe(0);
});

/** By hand, January 2026 (31 days), and February where it matters. */
const JANUARY: Record<string, number> = {
  'calls-eu': 3,
  'gb-sum': 7,
  'gb-sum-exact': 0.375,
  peak: 10,
  users: 2,
  last: 3,
  // (2 × 10 days + 5 × 10 days + 4 × 11 days) / 31 days = 114 / 31 = 3.677419354…
  seats: 3.677419,
  'seats-2': 3.68,
};

describe('aggregations against a hand computation', () => {
  it.each(Object.entries(JANUARY))('%s over January is %d', async (code, expected) => {
    const usage = await metering.usage(env, items.get(code) as string, '2026-01-15T00:00:00Z');
    expect(usage).toMatchObject({
      periodStart: '2026-01-01',
      periodEnd: '2026-02-01',
      quantity: expected,
      currency: 'EUR',
      metric: { code },
    });
    expect(usage.amount).toBe(Math.round(expected * UNIT));
  });

  it('counts unique values per period: a value seen in both periods counts in each, one before neither', async () => {
    const february = await metering.usage(env, items.get('users') as string, '2026-02-10T00:00:00Z');
    expect(february).toMatchObject({ periodStart: '2026-02-01', quantity: 3 });
  });

  it('carries the weighted level into the next period: 4 seats all February', async () => {
    const february = await metering.usage(env, items.get('seats') as string, '2026-02-10T00:00:00Z');
    expect(february.quantity).toBe(4);
  });
});

describe('billing the metrics', () => {
  it('bills each item what its usage read showed (preview = invoice), and the read then says billed', async () => {
    const previews = await Promise.all(
      METRICS.map((metric) => metering.usage(env, items.get(metric.code) as string, '2026-01-15T00:00:00Z')),
    );
    const run = await billing.runBilling(env, '2026-02-01T00:00:00.000Z');
    expect(run.errors).toEqual([]);
    const [invoice] = await billing.invoicesOf(env, customer);
    const billed = invoice.items
      .map((line: { amount: number }) => line.amount)
      .sort((x: number, y: number) => x - y);
    const previewed = previews.map((preview) => preview.amount).sort((x, y) => x - y);
    expect(billed).toEqual(previewed);
    expect(invoice.totalExclVat).toBe(previewed.reduce((sum, amount) => sum + amount, 0));
    const after = await metering.usage(env, items.get('peak') as string, '2026-01-15T00:00:00Z');
    expect(after).toMatchObject({ billed: true, quantity: 10 });
  });
});
