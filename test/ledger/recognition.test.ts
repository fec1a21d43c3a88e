import { beforeAll, describe, expect, it } from 'vitest';
import {
  creditAgainstSchedule,
  recognitionSchedule,
  recognizedAsOf,
} from '../../src/modules/ledger/ledger.recognition.ts';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { evenlyDeferringAccountSet } from './account-sets.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

/** The worked example of docs/ledger.md: a 12-month €1,200 annual plan booked on 15 January. */
const NET = 120000;
const START = '2026-01-15';
const END = '2027-01-15';

describe('the four strategies on the worked example (docs/ledger.md)', () => {
  it('even_distribution: twelve equal shares, each at the end of its month from the start', () => {
    const rows = recognitionSchedule('even_distribution', NET, START, END);
    expect(rows.map((row) => row.amount)).toEqual(Array(12).fill(10000));
    expect(rows.map((row) => row.date)).toEqual([
      '2026-02-14',
      '2026-03-14',
      '2026-04-14',
      '2026-05-14',
      '2026-06-14',
      '2026-07-14',
      '2026-08-14',
      '2026-09-14',
      '2026-10-14',
      '2026-11-14',
      '2026-12-14',
      '2027-01-14',
    ]);
  });

  it('daily_accrual: per calendar month by its days in the period, at each month’s end', () => {
    const rows = recognitionSchedule('daily_accrual', NET, START, END);
    expect(rows).toEqual([
      { date: '2026-01-31', amount: 5589 },
      { date: '2026-02-28', amount: 9205 },
      { date: '2026-03-31', amount: 10192 },
      { date: '2026-04-30', amount: 9863 },
      { date: '2026-05-31', amount: 10192 },
      { date: '2026-06-30', amount: 9863 },
      { date: '2026-07-31', amount: 10192 },
      { date: '2026-08-31', amount: 10192 },
      { date: '2026-09-30', amount: 9863 },
      { date: '2026-10-31', amount: 10192 },
      { date: '2026-11-30', amount: 9863 },
      { date: '2026-12-31', amount: 10192 },
      { date: '2027-01-14', amount: 4602 },
    ]);
    expect(rows.reduce((sum, row) => sum + row.amount, 0)).toBe(NET);
  });

  it('exact_daily_accrual: one row a day, the leftover units to the earliest days', () => {
    const rows = recognitionSchedule('exact_daily_accrual', NET, START, END);
    // 120000 / 365 = 328.767…: 280 days of 329 and 85 of 328
    expect(rows).toHaveLength(365);
    expect(rows.filter((row) => row.amount === 329)).toHaveLength(280);
    expect(rows[279]).toEqual({ date: '2026-10-21', amount: 329 });
    expect(rows[280]).toEqual({ date: '2026-10-22', amount: 328 });
    expect(rows.reduce((sum, row) => sum + row.amount, 0)).toBe(NET);
  });

  it('none: no schedule, all of it recognized at booking', () => {
    expect(recognitionSchedule('none', NET, START, END)).toEqual([]);
  });

  it('a €300 credit note on 10 May (month 4) takes back in proportion to what was recognized', () => {
    const expected = {
      even_distribution: { recognized: 30000, fromIncome: 7500, fromDeferral: 22500 },
      daily_accrual: { recognized: 34849, fromIncome: 8712, fromDeferral: 21288 },
      exact_daily_accrual: { recognized: 37835, fromIncome: 9459, fromDeferral: 20541 },
    } as const;
    for (const [strategy, figures] of Object.entries(expected)) {
      const rows = recognitionSchedule(strategy as keyof typeof expected, NET, START, END);
      const recognized = recognizedAsOf(rows, '2026-05-10');
      const open = rows.filter((row) => row.date >= '2026-05-10');
      const credit = creditAgainstSchedule(
        30000,
        recognized,
        open.map((row) => row.amount),
      );
      const deferredAfter = credit.rows.reduce((sum, amount) => sum + amount, 0);
      expect({
        strategy,
        recognized,
        fromIncome: credit.fromIncome,
        fromDeferral: NET - recognized - deferredAfter,
      }).toEqual({
        strategy,
        ...figures,
      });
      if (strategy === 'even_distribution') expect(credit.rows).toEqual(Array(9).fill(7500));
      if (strategy === 'daily_accrual') expect(credit.rows.slice(0, 2)).toEqual([7644, 7397]);
      if (strategy === 'exact_daily_accrual') {
        expect(credit.rows).toHaveLength(250);
        expect(new Set(credit.rows)).toEqual(new Set([246, 247]));
        expect(deferredAfter).toBe(61624);
      }
      // after the period, the line has recognized its net less the credit, exactly
      expect(recognized - credit.fromIncome + deferredAfter).toBe(NET - 30000);
    }
  });
});

const BOOK = `mutation ($id: UUID!) { invoiceBook(id: $id) { invoice { id } userErrors { message } } }`;
const RUN = `mutation ($upTo: Date!) { revenueRecognitionRun(upTo: $upTo) { run { posted } userErrors { message } } }`;
const TRIAL = `query ($asOf: Date!) { trialBalance(asOf: $asOf) { account { accountingCode } balance } }`;
const SCHEDULE = `query ($id: UUID!) { invoice(id: $id) { items { id recognitionSchedule { date amount posted cancelled } } } }`;

describe('recognition in the database', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment();
    customerId = await f.createCustomer(env);
    const accountSetId = await evenlyDeferringAccountSet(t, env);
    await f.gql(
      env,
      'mutation ($input: LedgerSettingsInput!) { ledgerSettingsUpdate(input: $input) { userErrors { message } } }',
      {
        input: { defaultAccountSetId: accountSetId },
      },
    );
  });

  async function annualPlan() {
    const { id } = await f.createInvoice(env, {
      customerId,
      date: START,
      items: [{ quantity: 1, unitAmount: NET, title: 'Annual plan', periodStart: START, periodEnd: END }],
    });
    expect((await f.gql(env, BOOK, { id })).invoiceBook.userErrors).toEqual([]);
    return id as string;
  }

  async function balances(asOf = '2099-12-31') {
    const data = await f.gql(env, TRIAL, { asOf });
    return Object.fromEntries(
      data.trialBalance.map((row: { account: { accountingCode: string }; balance: number }) => [
        row.account.accountingCode,
        row.balance,
      ]),
    );
  }

  it('books into deferral, recognizes what is due exactly once, and a credit note takes back in proportion', async () => {
    const id = await annualPlan();
    const [item] = (await f.gql(env, SCHEDULE, { id })).invoice.items;
    expect(item.recognitionSchedule).toHaveLength(12);
    expect(await balances()).toEqual({ '1100': NET, '2400': -NET });

    expect((await f.gql(env, RUN, { upTo: '2026-05-10' })).revenueRecognitionRun.run.posted).toBe(3);
    expect((await f.gql(env, RUN, { upTo: '2026-05-10' })).revenueRecognitionRun.run.posted).toBe(0);
    expect(await balances()).toEqual({ '1100': NET, '2400': -90000, '4100': -30000 });

    const note = await f.gql(
      env,
      `mutation ($id: UUID!, $input: CreditNoteCreateInput) {
        creditNoteCreate(invoiceId: $id, input: $input) { creditNote { id } userErrors { message } } }`,
      { id, input: { lines: [{ itemId: item.id, amount: 30000 }], date: '2026-05-10' } },
    );
    expect(note.creditNoteCreate.userErrors).toEqual([]);
    expect(
      (await f.gql(env, BOOK, { id: note.creditNoteCreate.creditNote.id })).invoiceBook.userErrors,
    ).toEqual([]);
    expect(await balances()).toEqual({ '1100': 90000, '2400': -67500, '4100': -22500 });
    const schedule = (await f.gql(env, SCHEDULE, { id })).invoice.items[0].recognitionSchedule;
    expect(
      schedule.filter((row: { posted: boolean }) => !row.posted).map((row: { amount: number }) => row.amount),
    ).toEqual(Array(9).fill(7500));
    expect(schedule.find((row: { amount: number }) => row.amount < 0)).toEqual({
      date: '2026-05-10',
      amount: -7500,
      posted: true,
      cancelled: false,
    });

    const deferred = await f.gql(
      env,
      'query { deferredRevenue(asOf: "2026-05-10") { currency balance waterfall { month amount } } }',
    );
    expect(deferred.deferredRevenue).toEqual([
      {
        currency: 'EUR',
        balance: 67500,
        waterfall: ['05', '06', '07', '08', '09', '10', '11', '12']
          .map((month) => ({ month: `2026-${month}`, amount: 7500 }))
          .concat([{ month: '2027-01', amount: 7500 }]),
      },
    ]);

    // after the period: recognized = net less the credit, nothing deferred, and a rerun changes nothing
    expect((await f.gql(env, RUN, { upTo: '2027-02-01' })).revenueRecognitionRun.run.posted).toBe(9);
    expect((await f.gql(env, RUN, { upTo: '2027-02-01' })).revenueRecognitionRun.run.posted).toBe(0);
    expect(await balances()).toEqual({ '1100': 90000, '2400': 0, '4100': -90000 });
  });

  it('a void takes back what was recognized and cancels the rest of the schedule', async () => {
    const before = await balances();
    const id = await annualPlan();
    await f.gql(env, RUN, { upTo: '2026-03-01' });
    const voided = await f.gql(
      env,
      'mutation ($id: UUID!) { invoiceVoid(id: $id) { userErrors { message } } }',
      { id },
    );
    expect(voided.invoiceVoid.userErrors).toEqual([]);
    expect(await balances()).toEqual(before);
    const schedule = (await f.gql(env, SCHEDULE, { id })).invoice.items[0].recognitionSchedule;
    expect(schedule.filter((row: { cancelled: boolean }) => row.cancelled)).toHaveLength(11);
    expect((await f.gql(env, RUN, { upTo: '2027-02-01' })).revenueRecognitionRun.run.posted).toBe(0);
    expect(await balances()).toEqual(before);
  });

  it('posts each row once when runs overlap', async () => {
    await annualPlan();
    await annualPlan();
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => t.graphql(RUN, { upTo: '2027-02-01' }, { env })),
    );
    const posted = runs.map((response) => response.body.data.revenueRecognitionRun.run.posted as number);
    expect(posted.reduce((sum, count) => sum + count, 0)).toBe(24);
    const [twice] = await t.sql<{ n: string }>(
      `select count(*) as n from (select r.id from recognition_row r join journal_entry e on e.id = r.posted_entry_id
        where r.environment_id = $1 group by r.id having count(*) > 1) doubled`,
      [env.id],
    );
    expect(Number(twice?.n)).toBe(0);
    const [entries] = await t.sql<{ n: string }>(
      "select count(*) as n from journal_entry where environment_id = $1 and kind = 'recognition'",
      [env.id],
    );
    const [rows] = await t.sql<{ n: string }>(
      'select count(*) as n from recognition_row where environment_id = $1 and posted_entry_id is not null and amount > 0',
      [env.id],
    );
    expect(Number(entries?.n)).toBe(Number(rows?.n));
    expect((await balances())['2400']).toBe(0);
  });
});
