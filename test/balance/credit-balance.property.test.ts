import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { balanceFixtures } from './balance-fixtures.ts';

const t = setupTestApp();
const f = balanceFixtures(t);

const OUTCOMES = ['settle_invoice', 'credit_balance', 'refund'] as const;

const line = fc.record({
  quantity: fc.integer({ min: 1, max: 3 }),
  unitAmount: fc.integer({ min: 1, max: 5000 }),
});
const operation = fc.oneof(
  fc.record({
    op: fc.constant('invoice' as const),
    lines: fc.array(line, { minLength: 1, maxLength: 3 }),
    taxed: fc.boolean(),
  }),
  fc.record({
    op: fc.constant('pay' as const),
    pick: fc.nat(),
    extra: fc.integer({ min: -3000, max: 3000 }),
  }),
  fc.record({
    op: fc.constant('credit' as const),
    pick: fc.nat(),
    kind: fc.constantFrom('amount', 'quantity', 'whole', 'free'),
    value: fc.integer({ min: 1, max: 3000 }),
    outcome: fc.constantFrom(...OUTCOMES),
  }),
  fc.record({ op: fc.constant('refund' as const), amount: fc.integer({ min: 1, max: 3000 }) }),
  fc.record({ op: fc.constant('void' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('reverse' as const), pick: fc.nat() }),
);
type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never;

type Invoice = { id: string; due: number; items: { id: string }[]; void?: boolean };

/**
 * Over random invoices, payments (under, exact and over), credit notes of every kind and outcome,
 * refunds from the balance, voids and settlement reversals, for one customer: after every step the
 * balance equals Σ of its movements and is never negative, every invoice's totalDue is its total less
 * Σ of its settlements (0 once void), and
 *   Σ (totalDue + excess) of invoices − balance = invoiced − credited − paid in + paid back
 * to the minor unit, where void invoices count neither as owed nor as invoiced, a reversed payment
 * was never paid in, and an invoice's excess is what it holds beyond its total (an over-payment the
 * balance carries until it is used).
 */
describe('credit balance reconciliation (property)', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment();
    await f.createTaxCode(env, 'VAT25', '25');
  });

  async function reconcile(customerId: string, paidIn: number) {
    const [row] = await t.sql<Record<string, string | null>>(
      `with inv as (
         select i.*, greatest(0, settled_amount - greatest(total_incl_vat, 0)) as excess,
           (select coalesce(sum(s.amount), 0) from settlement s where s.invoice_id = i.id) as settlements
         from invoice i where customer_id = $1 and status = 'booked' and voided_at is null)
       select
         (select amount from customer_balance where customer_id = $1) as balance,
         (select coalesce(sum(amount), 0) from balance_transaction where customer_id = $1) as movements,
         (select coalesce(sum(total_incl_vat - settled_amount + excess), 0) from inv where type = 'invoice') as owed,
         (select coalesce(sum(excess), 0) from inv where type = 'invoice') as excess,
         (select coalesce(sum(total_incl_vat), 0) from inv where type = 'invoice') as invoiced,
         (select coalesce(sum(total_incl_vat), 0) from inv where type = 'credit_note') as credited,
         (select count(*) from inv where type = 'credit_note' and settled_amount <> total_incl_vat) as open_notes,
         (select count(*) from inv where settled_amount <> settlements) as mismatched,
         (select coalesce(sum(amount), 0) from refund where customer_id = $1) as refunded,
         (select count(*) from invoice i where customer_id = $1 and voided_at is not null and settled_amount <> 0)
           as void_with_money`,
      [customerId],
    );
    const n = (key: string) => Number(row?.[key] ?? 0);
    expect(n('balance')).toBe(n('movements'));
    expect(n('balance')).toBeGreaterThanOrEqual(0);
    expect(n('balance')).toBeGreaterThanOrEqual(n('excess'));
    expect(n('mismatched')).toBe(0);
    expect(n('open_notes')).toBe(0);
    expect(n('void_with_money')).toBe(0);
    expect(n('owed') - n('balance')).toBe(n('invoiced') - n('credited') - paidIn + n('refunded'));
  }

  async function run(customerId: string, operations: Operation[]) {
    const invoices: Invoice[] = [];
    let paidIn = 0;
    for (const step of operations) {
      const target =
        'pick' in step && invoices.length > 0 ? invoices[step.pick % invoices.length] : undefined;
      if (step.op === 'invoice') {
        const draft = await f.createInvoice(env, {
          customerId,
          items: step.lines.map((l, index) => ({
            ...l,
            title: `Line ${index}`,
            taxCode: step.taxed ? 'VAT25' : null,
          })),
        });
        const booked = await f.book(env, draft.id);
        expect(booked.userErrors).toEqual([]);
        invoices.push({ id: draft.id, due: booked.invoice.totalDue, items: draft.items });
      } else if (step.op === 'pay' && target) {
        const due = (await t.rest('GET', `/invoices/${target.id}`, { env })).body.totalDue as number;
        const amount = Math.max(1, due + step.extra);
        const paid = await f.settle(env, target.id, amount);
        if (target.void) {
          expect(paid.userErrors.map((error: { code: string }) => error.code)).toEqual(['CONFLICT']);
        } else {
          expect(paid.userErrors).toEqual([]);
          paidIn += amount;
        }
      } else if (step.op === 'credit' && target) {
        const itemId = target.items[0]?.id;
        const input =
          step.kind === 'amount'
            ? { lines: [{ itemId, amount: step.value }] }
            : step.kind === 'quantity'
              ? { lines: [{ itemId, quantity: 1 }] }
              : step.kind === 'free'
                ? { freeLines: [{ title: 'Goodwill', amount: step.value }] }
                : {};
        const draft = await f.creditNote(env, target.id, { ...input, outcome: step.outcome });
        if (draft.userErrors.length > 0) {
          expect(draft.userErrors[0].code).toBe('CONFLICT');
        } else {
          const booked = await f.book(env, draft.creditNote.id);
          if (booked.userErrors.length > 0) {
            // only a refund beyond what was paid is refused; its draft goes, freeing what it took
            expect(step.outcome).toBe('refund');
            expect(booked.userErrors[0].code).toBe('CONFLICT');
            await f.gql(env, 'mutation ($id: UUID!) { invoiceDelete(id: $id) { deletedInvoiceId } }', {
              id: draft.creditNote.id,
            });
          }
        }
      } else if (step.op === 'void' && target) {
        const voided = (
          await f.gql(
            env,
            'mutation ($id: UUID!) { invoiceVoid(id: $id) { invoice { totalDue } userErrors { code } } }',
            {
              id: target.id,
            },
          )
        ).invoiceVoid;
        if (voided.userErrors.length > 0) expect(voided.userErrors[0].code).toBe('CONFLICT');
        else {
          expect(voided.invoice.totalDue).toBe(0);
          target.void = true;
        }
      } else if (step.op === 'reverse' && target) {
        const [payment] = await t.sql<{ id: string; amount: number }>(
          `select s.id, s.amount from settlement s where s.invoice_id = $1 and s.amount > 0
             and s.reverses_settlement_id is null
             and not exists (select 1 from settlement r where r.reverses_settlement_id = s.id)
           order by s.id limit 1`,
          [target.id],
        );
        if (payment) {
          const reversed = (
            await f.gql(
              env,
              'mutation ($id: UUID!) { settlementReverse(settlementId: $id, reason: "mistake") { userErrors { code } } }',
              { id: payment.id },
            )
          ).settlementReverse;
          // a payment the balance carried part of, or a credit note's settlement, stays
          if (reversed.userErrors.length > 0) expect(reversed.userErrors[0].code).toBe('CONFLICT');
          else paidIn -= Number(payment.amount);
        }
      } else if (step.op === 'refund') {
        const refunded = await f.refund(env, customerId, { currency: 'EUR', amount: step.amount });
        expect(refunded.userErrors.map((error: { code: string }) => error.code)).toEqual(
          refunded.refund ? [] : ['CONFLICT'],
        );
      }
      await reconcile(customerId, paidIn);
    }
  }

  it('reconciles the balance, every totalDue and all money movements to the minor unit', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 6 }), async (operations) => {
        await run(await f.createCustomer(env, { currency: 'EUR' }), operations);
      }),
      { seed: 20261123, numRuns: 100, endOnFailure: true },
    );
  }, 180_000);
});
