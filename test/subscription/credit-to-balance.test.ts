import { describe, expect, it } from 'vitest';
import { gql } from '../support/catalog.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { billingFixtures, midnight } from './fixtures.ts';

const t = setupTestApp();
const f = billingFixtures(t);

const MONEY = `query ($id: UUID!) { customer(id: $id) {
  balances { currency amount }
  balanceTransactions(first: 20) { edges { node { type amount invoice { id } } } }
  invoices(first: 20) { edges { node { id totalInclVat totalDue settlements { amount reference note } } } }
} }`;

const money = async (env: TestEnvironment, id: string) => {
  const customer = (await gql(t, env, MONEY, { id })).customer;
  return {
    balances: customer.balances,
    transactions: customer.balanceTransactions.edges.map((edge: { node: unknown }) => edge.node),
    invoices: customer.invoices.edges.map((edge: { node: unknown }) => edge.node),
  };
};

describe('credits with no invoice to go on', () => {
  it('a run whose invoice holds only credits puts them on the customer balance, which the next invoice uses', async () => {
    // given 3 seats at 10.00 from Mar 1, March billed in advance
    const env = await t.createEnvironment();
    const seat = await f.createProduct(env, { name: 'Seat' });
    const customerId = await f.createCustomer(env);
    const price = await f.createPrice(env, { name: 'Basic', pricing: { eur: { amount: 1000 } } });
    const subscription = await f.subscribe(env, {
      customerId,
      term: { start: '2026-03-01' },
      items: [{ productId: seat.id, priceId: price.id, quantity: 3 }],
    });
    await f.runBilling(env, midnight('2026-03-01'));

    // when it is cancelled on Mar 12 (20 of 31 days unused) and April's run has nothing else to bill
    const cancel = await f.tryCancel(env, subscription.id, '2026-03-12T10:00:00Z');
    expect(cancel.userErrors).toEqual([]);
    expect(cancel.prorationLines.map((line: { amount: number }) => line.amount)).toEqual([-1935]);
    await f.runBilling(env, midnight('2026-04-01'));

    // then the credit-only invoice is closed by the balance, which now holds its credit
    const april = await money(env, customerId);
    const credit = april.invoices.find((invoice: { totalInclVat: number }) => invoice.totalInclVat < 0);
    expect(credit.totalInclVat).toBeLessThanOrEqual(-1935);
    expect(credit).toMatchObject({
      totalDue: 0,
      settlements: [
        {
          amount: credit.totalInclVat,
          reference: 'customer balance',
          note: 'Credited to the customer balance',
        },
      ],
    });
    expect(april.balances).toEqual([{ currency: 'EUR', amount: -credit.totalInclVat }]);
    expect(april.transactions).toEqual([
      { type: 'invoice_credit', amount: -credit.totalInclVat, invoice: { id: credit.id } },
    ]);

    // when a new subscription bills in May, its invoice uses the balance
    await f.subscribe(env, {
      customerId,
      term: { start: '2026-05-01' },
      items: [{ productId: seat.id, priceId: price.id, quantity: 1 }],
    });
    await f.runBilling(env, midnight('2026-05-01'));
    const may = await money(env, customerId);
    const next = may.invoices.find(
      (invoice: { id: string; totalInclVat: number }) =>
        invoice.totalInclVat > 0 &&
        invoice.id !== credit.id &&
        !april.invoices.some((old: { id: string }) => old.id === invoice.id),
    );
    const used = Math.min(next.totalInclVat, -credit.totalInclVat);
    expect(next.settlements).toEqual([
      { amount: used, reference: 'customer balance', note: 'Credit balance applied' },
    ]);
    expect(may.balances).toEqual([{ currency: 'EUR', amount: -credit.totalInclVat - used }]);
  });
});
