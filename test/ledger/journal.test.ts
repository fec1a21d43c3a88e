import { beforeAll, describe, expect, it } from 'vitest';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { createLedgerAccount } from '../support/catalog.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { evenlyDeferringAccountSet } from './account-sets.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

const ACCOUNT = 'account { accountingCode }';
const SETTINGS = `query { ledgerSettings {
  receivableAccount { accountingCode name } cashAccount { accountingCode } customerCreditAccount { accountingCode }
  defaultAccountSet { id revenueRecognitionStrategy salesAccount { accountingCode } incomeAccount { accountingCode }
    taxAccount { accountingCode } deferralAccount { accountingCode } } } }`;
const ENTRIES = `query ($filter: JournalEntryFilter) { journalEntries(filter: $filter, first: 100) { edges { node {
  number kind date invoiceId customerId currency lines { ${ACCOUNT} debit credit taxCode } } } } }`;
const TRIAL = `query ($asOf: Date!) { trialBalance(asOf: $asOf) { ${ACCOUNT} currency debit credit balance } }`;
const BOOK = `mutation ($id: UUID!) { invoiceBook(id: $id) { invoice { id handle } userErrors { message code } } }`;
const SETTLE = `mutation ($id: UUID!, $input: InvoiceSettleInput!) {
  invoiceSettle(id: $id, input: $input) { settlement { id } userErrors { message } } }`;
const REVERSE = `mutation ($id: UUID!) { settlementReverse(settlementId: $id) { userErrors { message } } }`;
const VOID = `mutation ($id: UUID!) { invoiceVoid(id: $id) { userErrors { message } } }`;
const CREDIT = `mutation ($id: UUID!, $input: CreditNoteCreateInput) {
  creditNoteCreate(invoiceId: $id, input: $input) { creditNote { id } userErrors { message } } }`;

type Entry = {
  number: number;
  kind: string;
  date: string;
  invoiceId: string;
  lines: { account: { accountingCode: string }; debit: number; credit: number; taxCode: string | null }[];
};

/** An entry's lines as `code: ±amount` (debit positive), sorted, for readable expectations. */
const postings = (entry: Entry) =>
  entry.lines.map((line) => `${line.account.accountingCode}: ${line.debit - line.credit}`).sort();

async function entries(env: TestEnvironment, filter: Record<string, unknown> = {}): Promise<Entry[]> {
  const data = await f.gql(env, ENTRIES, { filter });
  return data.journalEntries.edges.map((edge: { node: Entry }) => edge.node);
}

async function booked(env: TestEnvironment, customerId: string, items: unknown[], date = '2026-01-15') {
  const { id } = await f.createInvoice(env, { customerId, date, items });
  const data = await f.gql(env, BOOK, { id });
  expect(data.invoiceBook.userErrors).toEqual([]);
  return id as string;
}

/** The receivable account's balance and the sum of the customer's invoices' totalDue agree. */
async function expectReceivableIsDue(env: TestEnvironment) {
  const [trial] = [await f.gql(env, TRIAL, { asOf: '2099-12-31' })];
  const receivable = trial.trialBalance.find(
    (row: { account: { accountingCode: string } }) => row.account.accountingCode === '1100',
  );
  const [due] = await t.sql<{ due: string }>(
    `select coalesce(sum(case when voided_at is null then total_incl_vat - settled_amount else 0 end
              * case when type = 'invoice' then 1 else -1 end), 0) as due
     from invoice where environment_id = $1 and status = 'booked'`,
    [env.id],
  );
  expect(receivable?.balance ?? 0).toBe(Number(due?.due));
  const sum = trial.trialBalance.reduce((total: number, row: { balance: number }) => total + row.balance, 0);
  expect(sum).toBe(0);
}

describe('ledger settings', () => {
  it('gives a new environment a default chart, receivable and cash accounts and a default account set', async () => {
    const env = await t.createEnvironment();
    const data = await f.gql(env, SETTINGS);
    expect(data.ledgerSettings).toEqual({
      receivableAccount: { accountingCode: '1100', name: 'Accounts receivable' },
      cashAccount: { accountingCode: '1000' },
      customerCreditAccount: { accountingCode: '2300' },
      defaultAccountSet: {
        id: expect.any(String),
        revenueRecognitionStrategy: 'none',
        salesAccount: { accountingCode: '4000' },
        incomeAccount: { accountingCode: '4100' },
        taxAccount: { accountingCode: '2200' },
        deferralAccount: { accountingCode: '2400' },
      },
    });
    // asked again, the same settings: the chart is made once
    expect((await f.gql(env, SETTINGS)).ledgerSettings).toEqual(data.ledgerSettings);
    const [count] = await t.sql<{ n: string }>(
      'select count(*) as n from ledger_account where environment_id = $1',
      [env.id],
    );
    expect(Number(count?.n)).toBe(7);
  });

  it('keeps an account the environment already had under a default code', async () => {
    const env = await t.createEnvironment();
    const own = await createLedgerAccount(t, env, { name: 'Bank', accountingCode: '1000' });
    const data = await f.gql(env, 'query { ledgerSettings { cashAccount { id name } } }');
    expect(data.ledgerSettings.cashAccount).toEqual({ id: own.id, name: 'Bank' });
  });

  it('changes the receivable account, and refuses a barred or unknown one by name', async () => {
    const env = await t.createEnvironment();
    const debtors = await createLedgerAccount(t, env, { name: 'Debtors', accountingCode: '1150' });
    const barred = await createLedgerAccount(t, env, { name: 'Old', accountingCode: '1199', barred: true });
    const UPDATE = `mutation ($input: LedgerSettingsInput!) { ledgerSettingsUpdate(input: $input) {
      ledgerSettings { receivableAccount { accountingCode } } userErrors { field message code } } }`;
    const ok = await f.gql(env, UPDATE, { input: { receivableAccountId: debtors.id } });
    expect(ok.ledgerSettingsUpdate).toEqual({
      ledgerSettings: { receivableAccount: { accountingCode: '1150' } },
      userErrors: [],
    });
    const refused = await f.gql(env, UPDATE, { input: { cashAccountId: barred.id } });
    expect(refused.ledgerSettingsUpdate).toEqual({
      ledgerSettings: null,
      userErrors: [
        {
          field: ['input', 'cashAccountId'],
          message: 'names ledger account 1199, which is barred',
          code: 'INVALID_REFERENCE',
        },
      ],
    });
  });
});

describe('journal', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment();
    customerId = await f.createCustomer(env);
    await f.createTaxCode(env, 'VAT25', '25');
  });

  it('posts a booking as one balanced entry: receivable, sales per line, tax per tax code', async () => {
    const id = await booked(env, customerId, [
      { quantity: 1, unitAmount: 1000, title: 'Plan', taxCode: 'VAT25' },
      { quantity: 2, unitAmount: 150, title: 'Seats', taxCode: 'VAT25' },
    ]);
    const [entry] = await entries(env, { invoiceId: id });
    expect(entry).toMatchObject({
      kind: 'booking',
      date: '2026-01-15',
      invoiceId: id,
      currency: 'EUR',
      customerId,
    });
    expect(postings(entry as Entry)).toEqual(['1100: 1625', '2200: -325', '4000: -1000', '4000: -300']);
    expect(entry?.lines.find((line) => line.account.accountingCode === '2200')?.taxCode).toBe('VAT25');
    await expectReceivableIsDue(env);
  });

  it('posts a settlement as cash against receivable, and its reversal the opposite', async () => {
    const id = await booked(env, customerId, [{ quantity: 1, unitAmount: 500, title: 'Once' }]);
    const settled = await f.gql(env, SETTLE, { id, input: { date: '2026-02-01', amount: 200 } });
    await f.gql(env, REVERSE, { id: settled.invoiceSettle.settlement.id });
    const [booking, settlement, reversal] = await entries(env, { invoiceId: id });
    expect(postings(booking as Entry)).toEqual(['1100: 500', '4000: -500']);
    expect(settlement).toMatchObject({ kind: 'settlement', date: '2026-02-01' });
    expect(postings(settlement as Entry)).toEqual(['1000: 200', '1100: -200']);
    expect(postings(reversal as Entry)).toEqual(['1000: -200', '1100: 200']);
    await expectReceivableIsDue(env);
  });

  it('posts a credit note as the reverse of what it credits, and a void as the reverse of the booking', async () => {
    const id = await booked(env, customerId, [
      { quantity: 1, unitAmount: 1000, title: 'Plan', taxCode: 'VAT25' },
      { quantity: 1, unitAmount: 400, title: 'Setup' },
    ]);
    const items = await t.sql<{ id: string; amount: string }>(
      'select id, amount from invoice_item where invoice_id = $1 order by amount desc',
      [id],
    );
    const note = await f.gql(env, CREDIT, { id, input: { itemIds: [items[0]?.id] } });
    await f.gql(env, BOOK, { id: note.creditNoteCreate.creditNote.id });
    const [creditEntry] = await entries(env, { invoiceId: note.creditNoteCreate.creditNote.id });
    expect(creditEntry?.kind).toBe('credit_note');
    expect(postings(creditEntry as Entry)).toEqual(['1100: -1250', '2200: 250', '4000: 1000']);
    await expectReceivableIsDue(env);

    const other = await booked(env, customerId, [{ quantity: 1, unitAmount: 700, title: 'Mistake' }]);
    expect((await f.gql(env, VOID, { id: other })).invoiceVoid.userErrors).toEqual([]);
    const [, voided] = await entries(env, { invoiceId: other });
    expect(voided?.kind).toBe('void');
    expect(postings(voided as Entry)).toEqual(['1100: -700', '4000: 700']);
    await expectReceivableIsDue(env);
  });

  it('posts an over-payment refunded out of the credit balance: cash out, customer credit cleared', async () => {
    // an environment of its own, so the entries below are all there is
    const env = await t.createEnvironment();
    const payer = await f.createCustomer(env);
    const id = await booked(env, payer, [{ quantity: 1, unitAmount: 300, title: 'Once' }]);
    await f.gql(env, SETTLE, { id, input: { date: '2026-02-01', amount: 500 } });
    const refunded = await f.gql(
      env,
      `mutation ($customerId: UUID!, $input: RefundCreateInput!) {
        refundCreate(customerId: $customerId, input: $input) { refund { id } userErrors { message } } }`,
      { customerId: payer, input: { amount: 150, date: '2026-02-10' } },
    );
    expect(refunded.refundCreate.userErrors).toEqual([]);
    const all = await entries(env, { customerId: payer });
    expect(all.map((entry) => entry.kind)).toEqual(['booking', 'settlement', 'settlement', 'refund']);
    const [, paid, moved, refund] = all as Entry[];
    expect(postings(paid as Entry)).toEqual(['1000: 500', '1100: -500']);
    expect(postings(moved as Entry)).toEqual(['1100: 150', '2300: -150']);
    expect(refund).toMatchObject({ date: '2026-02-10', invoiceId: null });
    expect(postings(refund as Entry)).toEqual(['1000: -150', '2300: 150']);
    const [row] = await t.sql<{ refund_id: string }>(
      "select refund_id from journal_entry where customer_id = $1 and kind = 'refund'",
      [payer],
    );
    expect(row?.refund_id).toBe(refunded.refundCreate.refund.id);

    // cash holds what stayed paid; what the balance gave back left the customer credit account again
    const net = (code: string) =>
      all
        .flatMap((entry) => entry.lines)
        .filter((line) => line.account.accountingCode === code)
        .reduce((sum, line) => sum + line.debit - line.credit, 0);
    expect([net('1000'), net('2300')]).toEqual([350, 0]);
    await expectReceivableIsDue(env);
  });

  it('numbers entries gaplessly per environment and filters them by account, customer and date', async () => {
    const all = await entries(env);
    expect(all.map((entry) => entry.number)).toEqual(all.map((_, index) => index + 1));
    const cash = await t.sql<{ id: string }>(
      "select id from ledger_account where environment_id = $1 and accounting_code = '1000'",
      [env.id],
    );
    const byCash = await entries(env, { accountId: cash[0]?.id });
    expect(byCash.map((entry) => entry.kind)).toEqual(['settlement', 'settlement']);
    const onFirstOfFebruary = await entries(env, { dateFrom: '2026-02-01', dateTo: '2026-02-01' });
    expect(onFirstOfFebruary.map((entry) => entry.kind)).toEqual(['settlement']);
    expect(await entries(env, { customerId: await f.createCustomer(env) })).toEqual([]);
  });

  it('refuses to book onto a barred account, naming it, and leaves no entry or number behind', async () => {
    const barredEnv = await t.createEnvironment();
    const customer = await f.createCustomer(barredEnv);
    await f.gql(barredEnv, SETTINGS);
    await t.sql(
      "update ledger_account set barred = true where environment_id = $1 and accounting_code = '4000'",
      [barredEnv.id],
    );
    const { id } = await f.createInvoice(barredEnv, {
      customerId: customer,
      items: [{ quantity: 1, unitAmount: 100, title: 'X' }],
    });
    const data = await f.gql(barredEnv, BOOK, { id });
    expect(data.invoiceBook).toEqual({
      invoice: null,
      userErrors: [
        {
          code: 'CONFLICT',
          message:
            'ledger account 4000 (Sales) is barred and takes no new postings; unbar it or change the account set or ledger settings that name it',
        },
      ],
    });
    expect(await entries(barredEnv)).toEqual([]);
    const [invoice] = await t.sql<{ status: string; handle: string | null }>(
      'select status, handle from invoice where id = $1',
      [id],
    );
    expect(invoice).toEqual({ status: 'draft', handle: null });
  });

  it('credits the deferral account for a line with a service period under a deferring account set', async () => {
    const deferEnv = await t.createEnvironment();
    const customer = await f.createCustomer(deferEnv);
    const accountSetId = await evenlyDeferringAccountSet(t, deferEnv);
    await f.createProduct(deferEnv, { handle: 'annual', name: 'Annual plan' });
    const [product] = await t.sql<{ id: string }>(
      "select id from product where environment_id = $1 and handle = 'annual'",
      [deferEnv.id],
    );
    const assigned = await f.gql(
      deferEnv,
      `mutation ($p: UUID!, $s: UUID) { productAccountSetSet(productId: $p, accountSetId: $s) {
        product { accountSet { revenueRecognitionStrategy } } userErrors { message } } }`,
      { p: product?.id, s: accountSetId },
    );
    expect(assigned.productAccountSetSet.product.accountSet).toEqual({
      revenueRecognitionStrategy: 'even_distribution',
    });
    const id = await booked(deferEnv, customer, [
      {
        quantity: 1,
        unitAmount: 120000,
        title: 'Annual',
        sku: 'annual',
        periodStart: '2026-01-15',
        periodEnd: '2027-01-15',
      },
      { quantity: 1, unitAmount: 5000, title: 'Setup', sku: 'annual' },
    ]);
    const [entry] = await entries(deferEnv, { invoiceId: id });
    expect(postings(entry as Entry)).toEqual(['1100: 125000', '2400: -120000', '4000: -5000']);
  });
});

describe('journal integrity in the database', () => {
  it('refuses to change or delete a posted line, and to commit an entry that does not balance', async () => {
    const env = await t.createEnvironment();
    const customerId = await f.createCustomer(env);
    await booked(env, customerId, [{ quantity: 1, unitAmount: 100, title: 'X' }]);
    await expect(
      t.sql('update journal_line set amount = amount * 2 where environment_id = $1', [env.id]),
    ).rejects.toThrow(/immutable/);
    await expect(t.sql('delete from journal_entry where environment_id = $1', [env.id])).rejects.toThrow(
      /immutable/,
    );
    const [line] = await t.sql<{ entry_id: string; account_id: string }>(
      'select entry_id, account_id from journal_line where environment_id = $1 limit 1',
      [env.id],
    );
    await expect(
      t.sql(
        'insert into journal_line (id, environment_id, entry_id, account_id, amount) values (gen_random_uuid(), $1, $2, $3, 1)',
        [env.id, line?.entry_id, line?.account_id],
      ),
    ).rejects.toThrow(/does not balance/);
  });
});

describe('GET /journal-entries', () => {
  it('exports a date range page by page as JSON and as CSV, and refuses a bad range', async () => {
    const env = await t.createEnvironment();
    const customerId = await f.createCustomer(env);
    await f.createTaxCode(env, 'VAT25', '25');
    for (const date of ['2026-03-01', '2026-03-02', '2026-03-03', '2026-04-01']) {
      await booked(
        env,
        customerId,
        [{ quantity: 1, unitAmount: 1000, title: 'Plan', taxCode: 'VAT25' }],
        date,
      );
    }
    const first = await t.rest('GET', '/journal-entries?from=2026-03-01&to=2026-03-31&limit=2', { env });
    expect(first.status).toBe(200);
    expect(first.body.data.map((entry: { number: number }) => entry.number)).toEqual([1, 2]);
    expect(first.body.data[0]).toMatchObject({ kind: 'booking', date: '2026-03-01', currency: 'EUR' });
    expect(
      first.body.data[0].lines.map((line: { accountingCode: string; debit: number; credit: number }) => [
        line.accountingCode,
        line.debit,
        line.credit,
      ]),
    ).toEqual([
      ['1100', 1250, 0],
      ['4000', 0, 1000],
      ['2200', 0, 250],
    ]);
    const second = await t.rest(
      'GET',
      `/journal-entries?from=2026-03-01&to=2026-03-31&limit=2&after=${first.body.nextCursor}`,
      { env },
    );
    expect(second.body.data.map((entry: { number: number }) => entry.number)).toEqual([3]);
    expect(second.body.nextCursor).toBeNull();

    const csv = await t.rest('GET', '/journal-entries?from=2026-04-01&to=2026-04-30', {
      env,
      headers: { accept: 'text/csv' },
    });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const rows = String(csv.body).trimEnd().split('\r\n');
    expect(rows[0]).toBe(
      'number,date,kind,invoice_id,customer_id,currency,accounting_code,debit,credit,tax_code',
    );
    expect(
      rows.slice(1).map((row) => row.split(',').filter((_, index) => [0, 1, 6, 7, 8, 9].includes(index))),
    ).toEqual([
      ['4', '2026-04-01', '1100', '1250', '0', ''],
      ['4', '2026-04-01', '4000', '0', '1000', ''],
      ['4', '2026-04-01', '2200', '0', '250', 'VAT25'],
    ]);

    const paged = await t.rest('GET', '/journal-entries?from=2026-03-01&to=2026-03-31&limit=2', {
      env,
      headers: { accept: 'text/csv' },
    });
    expect(String(paged.body).trimEnd().split('\r\n')).toHaveLength(1 + 2 * 3);
    expect(paged.headers.get('x-next-cursor')).toBe(first.body.nextCursor);

    const bad = await t.rest('GET', '/journal-entries?from=2026-13-01&to=2026-03-31', { env });
    expect(bad.status).toBe(400);
    const reversed = await t.rest('GET', '/journal-entries?from=2026-04-01&to=2026-03-31', { env });
    expect(reversed.status).toBe(400);
    expect(reversed.body.errors).toEqual([
      expect.objectContaining({ pointer: '/to', detail: 'must be on or after from' }),
    ]);
  });

  it('streams a CSV of a range larger than a page as one file, every entry once, in number order', async () => {
    const env = await t.createEnvironment();
    const customerId = await f.createCustomer(env);
    const invoiceId = await booked(
      env,
      customerId,
      [{ quantity: 1, unitAmount: 1000, title: 'Plan' }],
      '2026-05-01',
    );
    // 2,500 more entries than one page holds, written directly: cash against receivable, g each
    await t.sql(
      `with s as (select cash_account_id, receivable_account_id from ledger_settings where environment_id = $1),
       e as (insert into journal_entry (id, environment_id, number, kind, date, invoice_id, customer_id, currency, created_at)
         select gen_random_uuid(), $1, 1 + g, 'settlement', date '2026-05-01' + (g % 28), $2, $3, 'EUR', now()
         from generate_series(1, 2500) g returning id, number)
       insert into journal_line (id, environment_id, entry_id, account_id, amount)
       select gen_random_uuid(), $1, e.id, a.account_id, a.sign * (e.number - 1)
       from e, s, lateral (values (s.cash_account_id, 1), (s.receivable_account_id, -1)) a(account_id, sign)`,
      [env.id, invoiceId, customerId],
    );
    const csv = await t.rest('GET', '/journal-entries?from=2026-05-01&to=2026-05-31', {
      env,
      headers: { accept: 'text/csv' },
    });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('x-next-cursor')).toBeNull();
    const rows = String(csv.body).trimEnd().split('\r\n').slice(1);
    const numbers = [...new Set(rows.map((row) => Number(row.split(',')[0])))];
    expect(numbers).toEqual(Array.from({ length: 2501 }, (_, index) => index + 1));
    expect(rows).toHaveLength(1 * 2 + 2500 * 2);
  });
});
