import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

/**
 * Random histories through the API against PostgreSQL: fewer than the pure property test
 * (test/ledger/ledger.property.test.ts, 500 histories), because each step is a real request.
 */
const t = setupTestApp();
const f = invoiceFixtures(t);

const BOOK = 'mutation ($id: UUID!) { invoiceBook(id: $id) { userErrors { message } } }';
const RUN =
  'mutation ($upTo: Date!) { revenueRecognitionRun(upTo: $upTo) { run { posted } userErrors { message } } }';

const opArb = fc.oneof(
  fc.record({
    op: fc.constant('book' as const),
    amount: fc.integer({ min: 1, max: 500_000 }),
    deferred: fc.boolean(),
    month: fc.integer({ min: 1, max: 6 }),
    months: fc.integer({ min: 1, max: 14 }),
  }),
  fc.record({ op: fc.constant('settle' as const), pick: fc.nat(), share: fc.integer({ min: 1, max: 100 }) }),
  fc.record({ op: fc.constant('credit' as const), pick: fc.nat(), share: fc.integer({ min: 1, max: 100 }) }),
  fc.record({ op: fc.constant('void' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('run' as const), month: fc.integer({ min: 1, max: 24 }) }),
);

const monthDate = (month: number) => {
  const year = 2026 + Math.floor((month - 1) / 12);
  return `${year}-${String(((month - 1) % 12) + 1).padStart(2, '0')}-15`;
};

describe('the ledger over random histories through the API (property)', () => {
  let env: TestEnvironment;
  let setId: string;

  beforeAll(async () => {
    env = await t.createEnvironment();
    await f.createTaxCode(env, 'VAT25', '25');
    await f.gql(env, 'query { ledgerSettings { cashAccount { id } } }');
    const [set] = await t.sql<{ id: string }>(
      `select s.id from account_set s join ledger_settings l on l.default_account_set_id = s.id where l.environment_id = $1`,
      [env.id],
    );
    setId = set?.id as string;
  });

  it('balances, sums to zero, keeps receivable = Σ due and recognizes each line exactly, rerun or not', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 2, maxLength: 7 }), async (ops) => {
        const customerId = await f.createCustomer(env);
        const invoices: { id: string; itemId: string; voidable: boolean }[] = [];
        for (const op of ops) {
          if (op.op === 'book') {
            await t.sql('update account_set set recognition_strategy = $1 where id = $2', [
              op.deferred ? 'daily_accrual' : 'none',
              setId,
            ]);
            const invoice = await f.createInvoice(env, {
              customerId,
              date: monthDate(op.month),
              items: [
                {
                  quantity: 1,
                  unitAmount: op.amount,
                  title: 'Plan',
                  taxCode: 'VAT25',
                  periodStart: monthDate(op.month),
                  periodEnd: monthDate(op.month + op.months),
                },
              ],
            });
            expect((await f.gql(env, BOOK, { id: invoice.id })).invoiceBook.userErrors).toEqual([]);
            invoices.push({ id: invoice.id, itemId: invoice.items[0].id, voidable: true });
          } else if (op.op === 'run') {
            await f.gql(env, RUN, { upTo: monthDate(op.month) });
            expect(
              (await f.gql(env, RUN, { upTo: monthDate(op.month) })).revenueRecognitionRun.run.posted,
            ).toBe(0);
          } else if (invoices.length > 0) {
            const invoice = invoices[op.pick % invoices.length] as (typeof invoices)[number];
            const [row] = await t.sql<{ due: string; amount: string; voided: boolean }>(
              `select i.total_incl_vat - i.settled_amount as due, it.amount, i.voided_at is not null as voided
               from invoice i join invoice_item it on it.invoice_id = i.id where i.id = $1`,
              [invoice.id],
            );
            if (!row || row.voided) continue;
            if (op.op === 'void' && invoice.voidable) {
              await f.gql(env, 'mutation ($id: UUID!) { invoiceVoid(id: $id) { userErrors { message } } }', {
                id: invoice.id,
              });
            } else if (op.op === 'settle') {
              const amount = Math.floor((Number(row.due) * op.share) / 100);
              if (amount <= 0) continue;
              await f.gql(
                env,
                'mutation ($id: UUID!, $input: InvoiceSettleInput!) { invoiceSettle(id: $id, input: $input) { userErrors { message } } }',
                { id: invoice.id, input: { date: '2026-06-01', amount } },
              );
              invoice.voidable = false;
            } else if (op.op === 'credit') {
              const amount = Math.max(1, Math.floor((Number(row.amount) * op.share) / 200));
              const note = await t.graphql(
                `mutation ($id: UUID!, $input: CreditNoteCreateInput) {
                  creditNoteCreate(invoiceId: $id, input: $input) { creditNote { id } userErrors { message } } }`,
                {
                  id: invoice.id,
                  input: { lines: [{ itemId: invoice.itemId, amount }], date: '2026-07-01' },
                },
                { env },
              );
              const id = note.body.data?.creditNoteCreate?.creditNote?.id;
              if (id) await f.gql(env, BOOK, { id });
              invoice.voidable = false;
            }
          }
        }
        const unbalanced = await t.sql(
          'select entry_id from journal_line where environment_id = $1 group by entry_id having sum(amount) <> 0',
          [env.id],
        );
        expect(unbalanced).toEqual([]);
        const [trial] = await t.sql<{ total: string }>(
          'select coalesce(sum(amount), 0) as total from journal_line where environment_id = $1',
          [env.id],
        );
        expect(Number(trial?.total)).toBe(0);
        const [receivable] = await t.sql<{ ledger: string; due: string }>(
          `select
             (select coalesce(sum(l.amount), 0) from journal_line l join ledger_settings s
                on s.receivable_account_id = l.account_id where l.environment_id = $1) as ledger,
             (select coalesce(sum(case when voided_at is null then total_incl_vat - settled_amount else 0 end
                * case when type = 'invoice' then 1 else -1 end), 0)
              from invoice where environment_id = $1 and status = 'booked') as due`,
          [env.id],
        );
        expect(Number(receivable?.ledger)).toBe(Number(receivable?.due));
        // every deferred line: its live rows sum to its net less its credits, and after every period it is all recognized
        await f.gql(env, RUN, { upTo: '2030-01-01' });
        expect((await f.gql(env, RUN, { upTo: '2030-01-01' })).revenueRecognitionRun.run.posted).toBe(0);
        const lines = await t.sql<{
          net: string;
          credited: string;
          rows: string;
          open: string;
          voided: boolean;
        }>(
          `select it.amount as net,
             (select coalesce(sum(c.amount), 0) from invoice_item c join invoice n on n.id = c.invoice_id
              where c.credited_item_id = it.id and n.status = 'booked') as credited,
             (select coalesce(sum(r.amount), 0) from recognition_row r where r.invoice_item_id = it.id and not r.cancelled) as rows,
             (select count(*) from recognition_row r where r.invoice_item_id = it.id and not r.cancelled and r.posted_entry_id is null) as open,
             i.voided_at is not null as voided
           from invoice_item it join invoice i on i.id = it.invoice_id
           where i.environment_id = $1 and i.type = 'invoice' and i.status = 'booked'
             and exists (select 1 from recognition_row r where r.invoice_item_id = it.id)`,
          [env.id],
        );
        for (const line of lines) {
          expect(Number(line.open)).toBe(0);
          if (!line.voided) expect(Number(line.rows)).toBe(Number(line.net) - Number(line.credited));
        }
        const [deferral] = await t.sql<{ balance: string }>(
          `select coalesce(sum(l.amount), 0) as balance from journal_line l join account_set s
             on s.deferral_account_id = l.account_id where l.environment_id = $1 and s.id = $2`,
          [env.id, setId],
        );
        expect(Number(deferral?.balance)).toBe(0);
      }),
      { numRuns: 20, seed: 20261124 },
    );
  }, 120_000);
});
