import { beforeAll, describe, expect, it } from 'vitest';
import { billingFixtures, midnight } from '../subscription/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = billingFixtures(t);

type BilledInvoice = { id: string; status: string; items: unknown[] };

describe('a billing run for more lines than one invoice may have', () => {
  let env: TestEnvironment;
  let atCap: string;
  let overCap: string;

  beforeAll(async () => {
    env = await t.createEnvironment('Line cap', { kind: 'test' });
    const product = await f.createProduct(env, { handle: 'daily' });
    const price = await f.createPrice(env, {
      name: 'Daily',
      termUnit: 'day',
      pricing: { eur: { amount: 10 } },
    });
    atCap = await f.createCustomer(env, { name: 'At the cap' });
    overCap = await f.createCustomer(env, { name: 'Over the cap' });
    // Billed in advance, daily: one period due on each day from the start to the run's day.
    await f.subscribe(env, {
      customerId: atCap,
      term: { start: '2026-01-01' },
      items: [{ productId: product.id, priceId: price.id }],
    });
    await f.subscribe(env, {
      customerId: overCap,
      term: { start: '2025-12-31' },
      items: [{ productId: product.id, priceId: price.id }],
    });
  });

  it('bills 1,000 due periods on one invoice and 1,001 on two, failing no customer', async () => {
    // when a run bills 1,000 periods of one customer and 1,001 of the other
    const run = await f.runBilling(env, midnight('2028-09-26'));

    // then the run succeeds, and the second customer's last period starts another invoice
    expect(run).toMatchObject({ status: 'succeeded', errors: [], invoiceCount: 3, periodCount: 2001 });
    const one: BilledInvoice[] = await f.invoicesOf(env, atCap);
    const two: BilledInvoice[] = await f.invoicesOf(env, overCap);
    expect(one.map((invoice) => [invoice.status, invoice.items.length])).toEqual([['booked', 1000]]);
    expect(two.map((invoice) => [invoice.status, invoice.items.length])).toEqual([
      ['booked', 1000],
      ['booked', 1],
    ]);
    const billed = await t.sql<{ invoice_id: string; periods: string }>(
      `select b.invoice_id, count(*) as periods from billed_period b join invoice i on i.id = b.invoice_id
       where i.customer_id = $1 group by b.invoice_id`,
      [overCap],
    );
    expect(Object.fromEntries(billed.map((row) => [row.invoice_id, Number(row.periods)]))).toEqual({
      [two[0]?.id as string]: 1000,
      [two[1]?.id as string]: 1,
    });
  }, 300_000);
});
