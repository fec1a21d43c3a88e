import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { setupTestApp } from '../support/harness.ts';
import { billingFixtures, midnight } from './fixtures.ts';

const t = setupTestApp();
const f = billingFixtures(t);

/** The rows of the worked proration example in docs/subscriptions.md, amounts in cents. */
function documentedRows(): string[] {
  const doc = readFileSync(new URL('../../docs/subscriptions.md', import.meta.url), 'utf8');
  const start = doc.indexOf('<!-- proration-example:start -->');
  const end = doc.indexOf('<!-- proration-example:end -->');
  expect(start).toBeGreaterThan(0);
  return doc
    .slice(start, end)
    .split('\n')
    .filter((row) => /^\| \d{4}-\d\d-\d\d \|/.test(row))
    .map((row) => {
      const [date, line, period, amount] = row
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim());
      const [from, to] = (period as string).split(' to ');
      const cents = Math.round(Number(amount) * 100);
      return `${date} | ${line} | ${from}..${to} | ${cents}`;
    });
}

describe('the worked proration example of docs/subscriptions.md', () => {
  it('is what the billing runs bill', async () => {
    // given the example: 3 × Seat at 10.00 EUR a month in advance from 1 March 2026
    const env = await t.createEnvironment();
    const product = await f.createProduct(env, { name: 'Seat' });
    const customerId = await f.createCustomer(env);
    const basic = await f.createPrice(env, { name: 'Basic', pricing: { eur: { amount: 1000 } } });
    const subscription = await f.subscribe(env, {
      customerId,
      term: { start: '2026-03-01' },
      items: [{ productId: product.id, priceId: basic.id, quantity: 3 }],
    });
    // when March is billed, 5 seats are taken on 12 March, and April is billed
    await f.runBilling(env, midnight('2026-03-01'));
    const update = await f.tryUpdate(env, subscription.id, {
      at: '2026-03-12T14:00:00Z',
      items: [{ id: subscription.items[0].id, quantity: 5 }],
      proration: 'create',
    });
    expect(update.userErrors).toEqual([]);
    await f.runBilling(env, midnight('2026-04-01'));

    // then the invoices hold exactly the documented rows, and the hand-computed figures
    const invoices = await f.invoicesOf(env, customerId);
    const billed = invoices.flatMap(
      (invoice: {
        date: string;
        items: { description: string; periodStart: string; periodEnd: string; amount: number }[];
      }) =>
        invoice.items.map(
          (item) =>
            `${invoice.date} | ${item.description} | ${item.periodStart}..${item.periodEnd} | ${item.amount}`,
        ),
    );
    expect(billed).toEqual(documentedRows());
    expect(documentedRows()).toEqual([
      '2026-03-01 | Basic | 2026-03-01..2026-04-01 | 3000',
      '2026-04-01 | Basic | 2026-04-01..2026-05-01 | 5000',
      // 3000 × 20/31 = 1935.48 and 5000 × 20/31 = 3225.81, each rounded once
      '2026-04-01 | Unused time on 3 × Seat from 12 Mar | 2026-03-12..2026-04-01 | -1935',
      '2026-04-01 | Remaining time on 5 × Seat from 12 Mar | 2026-03-12..2026-04-01 | 3226',
    ]);
    expect(invoices[1].totalExclVat).toBe(6291);
  });
});
