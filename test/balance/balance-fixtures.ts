import { expect } from 'vitest';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import type { TestApp, TestEnvironment } from '../support/harness.ts';

const ERRORS = 'userErrors { field message code }';
export const INVOICE_STATE =
  'id handle type status settlementStatus totalInclVat totalDue creditOutcome creditReason settlements { amount reference note }';

const BOOK = `mutation ($id: UUID!) { invoiceBook(id: $id) { invoice { ${INVOICE_STATE} } ${ERRORS} } }`;
const SETTLE = `mutation ($id: UUID!, $input: InvoiceSettleInput!) {
  invoiceSettle(id: $id, input: $input) { invoice { ${INVOICE_STATE} } ${ERRORS} } }`;
const CREDIT = `mutation ($invoiceId: UUID!, $input: CreditNoteCreateInput) {
  creditNoteCreate(invoiceId: $invoiceId, input: $input) {
    creditNote { ${INVOICE_STATE} items { creditedItemId title quantity amount taxAmount } } ${ERRORS} } }`;
const REFUND = `mutation ($customerId: UUID!, $input: RefundCreateInput!) {
  refundCreate(customerId: $customerId, input: $input) {
    refund { id amount currency reference creditNote { id } } balance { currency amount } ${ERRORS} } }`;

/** Given-state and action helpers for the credit balance tests, all through GraphQL and REST. */
export function balanceFixtures(t: TestApp) {
  const f = invoiceFixtures(t);

  return {
    ...f,

    /** A booked invoice of `unitAmounts` (quantity 1 each, untaxed unless `taxCode`). */
    async bookedInvoice(
      env: TestEnvironment,
      customerId: string,
      unitAmounts: number[],
      more: { taxCode?: string; quantity?: number } = {},
    ) {
      const draft = await f.createInvoice(env, {
        customerId,
        items: unitAmounts.map((unitAmount, index) => ({
          quantity: more.quantity ?? 1,
          unitAmount,
          title: `Line ${index + 1}`,
          taxCode: more.taxCode ?? null,
        })),
      });
      const booked = await this.book(env, draft.id);
      expect(booked.userErrors).toEqual([]);
      return { ...booked.invoice, items: draft.items as { id: string }[] };
    },

    async book(env: TestEnvironment, id: string) {
      return (await f.gql(env, BOOK, { id })).invoiceBook;
    },

    async settle(env: TestEnvironment, id: string, amount: number) {
      return (await f.gql(env, SETTLE, { id, input: { date: '2026-03-10', amount } })).invoiceSettle;
    },

    async creditNote(env: TestEnvironment, invoiceId: string, input: Record<string, unknown> = {}) {
      return (await f.gql(env, CREDIT, { invoiceId, input })).creditNoteCreate;
    },

    async refund(env: TestEnvironment, customerId: string, input: Record<string, unknown>) {
      return (await f.gql(env, REFUND, { customerId, input: { date: '2026-03-20', ...input } })).refundCreate;
    },

    /** The customer's balances and every balance transaction, as GraphQL shows them. */
    async balanceOf(env: TestEnvironment, customerId: string) {
      const data = await f.gql(
        env,
        `query ($id: UUID!) { customer(id: $id) {
          balances { currency amount }
          balanceTransactions(first: 100) { edges { node {
            type amount currency invoice { id } creditNote { id } refund { id amount } } } }
        } }`,
        { id: customerId },
      );
      return {
        balances: data.customer.balances as { currency: string; amount: number }[],
        transactions: data.customer.balanceTransactions.edges.map((edge: any) => edge.node),
      };
    },

    /** The balance row and Σ of the movements, read from the database. */
    async balanceRows(env: TestEnvironment, customerId: string, currency = 'EUR') {
      const [row] = await t.sql<{ balance: string | null; movements: string; refunds: string }>(
        `select
           (select amount from customer_balance where environment_id = $1 and customer_id = $2 and currency = $3) as balance,
           (select coalesce(sum(amount), 0) from balance_transaction
            where environment_id = $1 and customer_id = $2 and currency = $3) as movements,
           (select count(*) from refund where environment_id = $1 and customer_id = $2) as refunds`,
        [env.id, customerId, currency],
      );
      if (!row) throw new Error('the balance query returned no row');
      return {
        balance: row.balance === null ? null : Number(row.balance),
        movements: Number(row.movements),
        refunds: Number(row.refunds),
      };
    },
  };
}
