import { beforeAll, describe, expect, it } from 'vitest';
import { billingFixtures, midnight } from '../subscription/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = billingFixtures(t);

/** The monthly boundaries of a subscription starting 2026-01-31: month ends, never drifting to the 28th. */
const BOUNDARIES = [
  '2026-01-31',
  '2026-02-28',
  '2026-03-31',
  '2026-04-30',
  '2026-05-31',
  '2026-06-30',
  '2026-07-31',
  '2026-08-31',
  '2026-09-30',
  '2026-10-31',
  '2026-11-30',
  '2026-12-31',
  '2027-01-31',
  '2027-02-28',
];
const PERIODS = BOUNDARIES.slice(0, 13).map((start, n) => ({ start, end: BOUNDARIES[n + 1] as string }));

describe('13 monthly periods, in advance and in arrears, on a controlled clock', () => {
  let env: TestEnvironment;
  let advanceCustomer: string;
  let arrearsCustomer: string;

  beforeAll(async () => {
    // A test environment: its clock runs into 2028, ahead of now.
    env = await t.createEnvironment('Test', { kind: 'test' });
    await t.sql(
      `insert into tax_code (id, environment_id, code, rate, created_at)
      values (gen_random_uuid(), $1, 'STD', 25, now())`,
      [env.id],
    );
    const product = await f.createProduct(env, { name: 'Seats', handle: 'seats', taxCode: 'STD' });
    const advance = await f.createPrice(env, {
      name: 'Seat, monthly in advance',
      pricing: { eur: { amount: 1000 } },
    });
    const arrears = await f.createPrice(env, {
      name: 'Seat, monthly in arrears',
      method: 'arrears',
      pricing: { eur: { amount: 1000 } },
    });
    advanceCustomer = await f.createCustomer(env, { name: 'Advance' });
    arrearsCustomer = await f.createCustomer(env, { name: 'Arrears' });
    // A 13-month term that does not renew: exactly 13 periods each.
    const term = { start: '2026-01-31', end: '2027-02-28' };
    await f.subscribe(env, {
      customerId: advanceCustomer,
      term,
      items: [{ productId: product.id, priceId: advance.id, quantity: 3 }],
    });
    await f.subscribe(env, {
      customerId: arrearsCustomer,
      term,
      items: [{ productId: product.id, priceId: arrears.id, quantity: 3 }],
    });
  });

  it('bill each period once, on its day, and a rerun of any run bills nothing new', async () => {
    // when a run is made on every boundary day, and each run is made a second time
    for (const [n, day] of BOUNDARIES.entries()) {
      const run = await f.runBilling(env, midnight(day));
      const expected = (n < 13 ? 1 : 0) + (n > 0 ? 1 : 0);
      expect(run).toMatchObject({
        status: 'succeeded',
        triggeredBy: 'api',
        asOf: midnight(day),
        invoiceCount: expected,
        periodCount: expected,
        errors: [],
      });
      expect(run.invoiceIds).toHaveLength(expected);
      const rerun = await f.runBilling(env, midnight(day));
      expect(rerun).toMatchObject({ status: 'succeeded', invoiceCount: 0, periodCount: 0, invoiceIds: [] });
    }

    // then each customer has 13 booked invoices, one per period, dated the day it was billed
    const advanceInvoices = await f.invoicesOf(env, advanceCustomer);
    const arrearsInvoices = await f.invoicesOf(env, arrearsCustomer);
    const line = (period: { start: string; end: string }) => ({
      quantity: 3,
      unitAmount: 1000,
      sku: 'seats',
      title: 'Seats',
      periodStart: period.start,
      periodEnd: period.end,
      amount: 3000,
      taxAmount: 750,
      tax: { taxCode: 'STD', taxRate: 25 },
    });
    expect(advanceInvoices).toHaveLength(13);
    expect(arrearsInvoices).toHaveLength(13);
    PERIODS.forEach((period, n) => {
      expect(advanceInvoices[n]).toMatchObject({
        status: 'booked',
        date: period.start,
        currency: 'EUR',
        totalExclVat: 3000,
        totalInclVat: 3750,
        items: [{ ...line(period), description: 'Seat, monthly in advance' }],
      });
      expect(arrearsInvoices[n]).toMatchObject({
        status: 'booked',
        date: period.end,
        items: [{ ...line(period), description: 'Seat, monthly in arrears' }],
      });
    });

    // and the ledger holds each (item, period) exactly once, both subscriptions having ended at the term end
    const ledger = await t.sql<{ count: string; distinct: string }>(
      `select count(*) as count, count(distinct (subscription_item_id, period_start)) as distinct
       from billed_period where environment_id = $1`,
      [env.id],
    );
    expect(ledger[0]).toEqual({ count: '26', distinct: '26' });
    const statuses = await t.sql('select status from subscription where environment_id = $1', [env.id]);
    expect(statuses).toEqual([{ status: 'ended' }, { status: 'ended' }]);
    const later = await f.runBilling(env, midnight('2028-01-01'));
    expect(later).toMatchObject({ invoiceCount: 0, periodCount: 0, endedCount: 0 });
  });

  it('bill every period due at once when a run comes late: one invoice per customer and currency', async () => {
    // given the same two subscriptions in a fresh environment
    const late = await t.createEnvironment('Late', { kind: 'test' });
    const product = await f.createProduct(late, { handle: 'seats' });
    const advance = await f.createPrice(late, { pricing: { eur: { amount: 1000 } } });
    const arrears = await f.createPrice(late, { method: 'arrears', pricing: { eur: { amount: 1000 } } });
    const customer = await f.createCustomer(late);
    const term = { start: '2026-01-31', end: '2027-02-28' };
    for (const price of [advance, arrears]) {
      await f.subscribe(late, {
        customerId: customer,
        term,
        items: [{ productId: product.id, priceId: price.id }],
      });
    }

    // when the first run is made after the term
    const run = await f.runBilling(late, midnight('2027-03-15'));

    // then one invoice carries all 26 periods, and both subscriptions have ended
    expect(run).toMatchObject({ invoiceCount: 1, periodCount: 26, endedCount: 2 });
    const [invoice] = await f.invoicesOf(late, customer);
    expect(invoice.items).toHaveLength(26);
    expect(invoice.totalExclVat).toBe(26_000);
    expect(invoice.date).toBe('2027-03-15');
    expect(invoice.items.map((item: { periodStart: string }) => item.periodStart)).toEqual([
      ...PERIODS.map((period) => period.start),
      ...PERIODS.map((period) => period.start),
    ]);
  });
});
