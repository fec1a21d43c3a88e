import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays } from '../../src/dates/calendar.ts';
import {
  RECOGNITION_STRATEGIES,
  type RecognitionStrategy,
} from '../../src/modules/ledger/account-set.entity.ts';
import {
  bookingLines,
  type PostingLine,
  reversedLines,
  settlementLines,
} from '../../src/modules/ledger/ledger.posting.ts';
import { creditAgainstSchedule, recognitionSchedule } from '../../src/modules/ledger/ledger.recognition.ts';

/**
 * The posting and recognition arithmetic over random histories, as the journal service composes it,
 * without the database (test/ledger/ledger-db.property.test.ts runs fewer histories through the API).
 */

const RECEIVABLE = 'receivable';
const CASH = 'cash';
const SET = { accountSetId: 'set', taxAccountId: 'tax' };

type Row = { date: string; amount: number; posted: boolean };
type Line = { id: string; net: number; tax: number; deferred: boolean; rows: Row[]; credited: number };
type Invoice = { lines: Line[]; total: number; settled: number; credited: number; void: boolean };

const lineArb = fc.record({
  net: fc.integer({ min: 1, max: 2_000_000 }),
  taxRate: fc.constantFrom(0, 10, 25),
  strategy: fc.constantFrom(...RECOGNITION_STRATEGIES),
  start: fc.integer({ min: 0, max: 360 }),
  days: fc.integer({ min: 1, max: 400 }),
  withPeriod: fc.boolean(),
});
const opArb = fc.oneof(
  fc.record({ op: fc.constant('book' as const), lines: fc.array(lineArb, { minLength: 1, maxLength: 3 }) }),
  fc.record({
    op: fc.constant('credit' as const),
    pick: fc.nat(),
    line: fc.nat(),
    share: fc.integer({ min: 1, max: 100 }),
  }),
  fc.record({ op: fc.constant('settle' as const), pick: fc.nat(), share: fc.integer({ min: 1, max: 100 }) }),
  fc.record({ op: fc.constant('reverse' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('void' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('run' as const), day: fc.integer({ min: 0, max: 800 }) }),
);
type Op = typeof opArb extends fc.Arbitrary<infer T> ? T : never;

const day = (n: number) => addDays('2026-01-01', n);
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0) + 0;

function simulate(ops: readonly Op[]) {
  const journal: PostingLine[][] = [];
  const invoices: Invoice[] = [];
  const settlements: { invoice: Invoice; amount: number; reversed: boolean }[] = [];
  let ids = 0;
  const post = (lines: PostingLine[]) => journal.push(lines);
  const target = (line: Line) => ({
    ...SET,
    revenueAccountId: line.deferred ? `deferral:${line.id}` : 'sales',
  });
  const run = (upTo: string) => {
    const before = journal.length;
    for (const invoice of invoices) {
      if (invoice.void) continue;
      for (const line of invoice.lines) {
        for (const row of line.rows) {
          if (row.posted || row.amount === 0 || row.date >= upTo) continue;
          row.posted = true;
          post([
            {
              accountId: `deferral:${line.id}`,
              amount: row.amount,
              accountSetId: null,
              invoiceItemId: line.id,
              taxCode: null,
            },
            {
              accountId: `income:${line.id}`,
              amount: -row.amount,
              accountSetId: null,
              invoiceItemId: line.id,
              taxCode: null,
            },
          ]);
        }
      }
    }
    return journal.length - before;
  };
  for (const op of ops) {
    const live = invoices.filter((invoice) => !invoice.void);
    if (op.op === 'book') {
      const lines: Line[] = op.lines.map((spec) => {
        const id = `l${++ids}`;
        const deferred = spec.withPeriod && spec.strategy !== 'none';
        const rows = deferred
          ? recognitionSchedule(
              spec.strategy as RecognitionStrategy,
              spec.net,
              day(spec.start),
              day(spec.start + spec.days),
            )
          : [];
        return {
          id,
          net: spec.net,
          tax: Math.round((spec.net * spec.taxRate) / 100),
          deferred,
          rows: rows.map((row) => ({ ...row, posted: false })),
          credited: 0,
        };
      });
      const invoice = {
        lines,
        total: sum(lines.map((line) => line.net + line.tax)),
        settled: 0,
        credited: 0,
        void: false,
      };
      invoices.push(invoice);
      post(
        bookingLines(
          RECEIVABLE,
          lines.map((line) => ({ id: line.id, amount: line.net, taxAmount: line.tax, taxCode: 'VAT' })),
          (item) => target(lines.find((line) => line.id === item.id) as Line),
          1,
        ),
      );
    } else if (op.op === 'credit' && live.length > 0) {
      const invoice = live[op.pick % live.length] as Invoice;
      const line = invoice.lines[op.line % invoice.lines.length] as Line;
      const left = line.net - line.credited;
      const credit = Math.floor((left * op.share) / 100);
      if (credit === 0) continue;
      let recognized: { accountId: string; amount: number } | undefined;
      if (line.deferred) {
        const open = line.rows.filter((row) => !row.posted && row.amount !== 0);
        const posted = sum(line.rows.filter((row) => row.posted).map((row) => row.amount));
        const result = creditAgainstSchedule(
          credit,
          posted,
          open.map((row) => row.amount),
        );
        open.forEach((row, index) => {
          row.amount = result.rows[index] as number;
        });
        line.rows.push({ date: '0000', amount: -result.fromIncome, posted: true });
        recognized = { accountId: `income:${line.id}`, amount: result.fromIncome };
      }
      line.credited += credit;
      invoice.credited += credit;
      post(
        bookingLines(
          RECEIVABLE,
          [{ id: line.id, amount: credit, taxAmount: 0 }],
          () => ({ ...target(line), recognized }),
          -1,
        ),
      );
    } else if (op.op === 'settle' && live.length > 0) {
      const invoice = live[op.pick % live.length] as Invoice;
      const due = invoice.total - invoice.credited - invoice.settled;
      const amount = Math.floor((due * op.share) / 100);
      if (amount <= 0) continue;
      invoice.settled += amount;
      settlements.push({ invoice, amount, reversed: false });
      post(settlementLines(RECEIVABLE, CASH, amount, 1));
    } else if (op.op === 'reverse') {
      const open = settlements.filter((settlement) => !settlement.reversed);
      const settlement = open[op.pick % Math.max(open.length, 1)];
      if (!settlement) continue;
      settlement.reversed = true;
      settlement.invoice.settled -= settlement.amount;
      post(settlementLines(RECEIVABLE, CASH, -settlement.amount, 1));
    } else if (op.op === 'void') {
      // As the service: only an invoice with no settlement standing and no credit note.
      const voidable = live.filter((invoice) => invoice.settled === 0 && invoice.credited === 0);
      const invoice = voidable[op.pick % Math.max(voidable.length, 1)];
      if (!invoice) continue;
      invoice.void = true;
      const booking = bookingLines(
        RECEIVABLE,
        invoice.lines.map((line) => ({ id: line.id, amount: line.net, taxAmount: line.tax, taxCode: 'VAT' })),
        (item) => target(invoice.lines.find((line) => line.id === item.id) as Line),
        1,
      );
      const split = booking.flatMap((posting) => {
        const line = invoice.lines.find((candidate) => candidate.id === posting.invoiceItemId);
        if (!line?.deferred) return [posting];
        const recognized = sum(line.rows.filter((row) => row.posted).map((row) => row.amount));
        return [
          { ...posting, amount: posting.amount + recognized },
          { ...posting, accountId: `income:${line.id}`, amount: -recognized },
        ].filter((part) => part.amount !== 0);
      });
      post(reversedLines(split));
    } else if (op.op === 'run') {
      const upTo = day(op.day);
      run(upTo);
      // a rerun of the same date posts nothing
      expect(run(upTo)).toBe(0);
    }
  }
  return { journal, invoices, run };
}

function balanceOf(journal: readonly PostingLine[][], account: string): number {
  return sum(
    journal.flatMap((entry) =>
      entry.filter((posting) => posting.accountId === account).map((posting) => posting.amount),
    ),
  );
}

describe('ledger arithmetic over random histories (property)', () => {
  it('balances every entry and the trial balance, recognizes every line exactly, and keeps receivable = Σ due', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 25 }), (ops) => {
        const { journal, invoices, run } = simulate(ops);
        for (const entry of journal) expect(sum(entry.map((posting) => posting.amount))).toBe(0);
        const due = sum(
          invoices
            .filter((invoice) => !invoice.void)
            .map((invoice) => invoice.total - invoice.credited - invoice.settled),
        );
        expect(balanceOf(journal, RECEIVABLE)).toBe(due);
        for (const invoice of invoices) {
          for (const line of invoice.lines) {
            if (!line.deferred) continue;
            const recognized = 0 - balanceOf(journal, `income:${line.id}`);
            const deferred = 0 - balanceOf(journal, `deferral:${line.id}`);
            if (invoice.void) {
              expect({ recognized, deferred }).toEqual({ recognized: 0, deferred: 0 });
              continue;
            }
            expect(recognized + deferred).toBe(line.net - line.credited);
            expect(deferred).toBe(sum(line.rows.filter((row) => !row.posted).map((row) => row.amount)));
          }
        }
        // after every service period: all recognized, nothing deferred, and a rerun changes nothing
        run('2099-01-01');
        const entries = journal.length;
        expect(run('2099-01-01')).toBe(0);
        expect(journal.length).toBe(entries);
        for (const invoice of invoices.filter((candidate) => !candidate.void)) {
          for (const line of invoice.lines.filter((candidate) => candidate.deferred)) {
            expect(0 - balanceOf(journal, `income:${line.id}`)).toBe(line.net - line.credited);
            expect(balanceOf(journal, `deferral:${line.id}`)).toBe(0);
          }
        }
        const trial = new Map<string, number>();
        for (const posting of journal.flat())
          trial.set(posting.accountId, (trial.get(posting.accountId) ?? 0) + posting.amount);
        expect(sum([...trial.values()])).toBe(0);
      }),
      { numRuns: 500, seed: 20261124 },
    );
  });
});
