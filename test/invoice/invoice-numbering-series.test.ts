import { describe, expect, it } from 'vitest';
import { EXECUTION_LIMITS } from '../../src/config.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { invoiceFixtures } from './fixtures.ts';

// Concurrent bookings queue behind the numbering row lock; on a loaded machine the last ones wait past
// the 10 s request deadline, which is not what these tests are about (test/limits covers it).
const t = setupTestApp({ executionLimits: { ...EXECUTION_LIMITS, timeoutMs: 120_000 } });
const f = invoiceFixtures(t);

const BOOK = `mutation ($id: UUID!) {
  invoiceBook(id: $id) { invoice { id handle } userErrors { field message code } }
}`;
const NUMBERING = `mutation ($type: InvoiceType!, $input: InvoiceNumberingUpdateInput!) {
  invoiceNumberingUpdate(type: $type, input: $input) {
    numbering { type prefix pattern yearlyReset lastNumber } userErrors { field message code }
  }
}`;

const ITEM = { quantity: 1, unitAmount: 1000, title: 'Subscription' };

async function draft(env: TestEnvironment, customerId: string, body: Record<string, unknown> = {}) {
  return (await f.createInvoice(env, { customerId, items: [ITEM], ...body })).id as string;
}

async function book(env: TestEnvironment, customerId: string, date: string) {
  const id = await draft(env, customerId, { date });
  const data = await f.gql(env, BOOK, { id });
  expect(data.invoiceBook.userErrors).toEqual([]);
  return data.invoiceBook.invoice.handle as string;
}

async function configure(env: TestEnvironment, input: Record<string, unknown>, type = 'invoice') {
  return (await f.gql(env, NUMBERING, { type, input })).invoiceNumberingUpdate;
}

describe('numbering series', () => {
  it('keeps the format from before patterns for an environment that configures nothing', async () => {
    const env = await t.createEnvironment('Series default');
    const customerId = await f.createCustomer(env);

    expect(await book(env, customerId, '2026-03-01')).toBe('INV-000001');
    const listed = await f.gql(env, '{ invoiceNumbering { type prefix pattern yearlyReset lastNumber } }');
    expect(listed.invoiceNumbering).toEqual([
      { type: 'invoice', prefix: 'INV-', pattern: 'INV-{SEQ:6}', yearlyReset: false, lastNumber: 1 },
      { type: 'credit_note', prefix: 'CN-', pattern: 'CN-{SEQ:6}', yearlyReset: false, lastNumber: 0 },
    ]);
  });

  it('numbers by the pattern, with the year and month of the invoice date', async () => {
    // given
    const env = await t.createEnvironment('Series pattern');
    const customerId = await f.createCustomer(env);

    // when
    const configured = await configure(env, { pattern: 'R/{YY}/{MM}/{YYYY}-{SEQ:3}' });

    // then
    expect(configured).toEqual({
      numbering: {
        type: 'invoice',
        prefix: 'INV-',
        pattern: 'R/{YY}/{MM}/{YYYY}-{SEQ:3}',
        yearlyReset: false,
        lastNumber: 0,
      },
      userErrors: [],
    });
    expect(await book(env, customerId, '2025-12-31')).toBe('R/25/12/2025-001');
    expect(await book(env, customerId, '2026-02-01')).toBe('R/26/02/2026-002');
  });

  it('applies a pattern change to the next number only; issued numbers keep theirs and the count goes on', async () => {
    // given one invoice numbered in today's format
    const env = await t.createEnvironment('Series change');
    const customerId = await f.createCustomer(env);
    const first = await draft(env, customerId, { date: '2026-03-01' });
    expect((await f.gql(env, BOOK, { id: first })).invoiceBook.invoice.handle).toBe('INV-000001');

    // when the pattern changes
    await configure(env, { pattern: 'F-{YYYY}-{SEQ:6}' });

    // then the next number takes it and continues the count; the first keeps its number
    expect(await book(env, customerId, '2026-03-02')).toBe('F-2026-000002');
    expect((await t.rest('GET', `/invoices/${first}`, { env })).body.handle).toBe('INV-000001');

    // and going back to a prefix gives that format again, still counting on
    await configure(env, { prefix: 'G-' });
    expect(await book(env, customerId, '2026-03-03')).toBe('G-000003');
  });

  it('with a yearly reset starts at 1 in each year of invoice dates, also for an invoice dated back', async () => {
    // given a yearly series
    const env = await t.createEnvironment('Series yearly');
    const customerId = await f.createCustomer(env);
    const configured = await configure(env, { pattern: 'INV-{YYYY}-{SEQ:4}', yearlyReset: true });
    expect(configured.userErrors).toEqual([]);
    expect(configured.numbering.yearlyReset).toBe(true);

    // when invoices dated in two years are booked, the last one dated back into the first year
    const handles = [
      await book(env, customerId, '2025-12-30'),
      await book(env, customerId, '2025-12-31'),
      await book(env, customerId, '2026-01-02'),
      await book(env, customerId, '2026-01-03'),
      await book(env, customerId, '2025-12-29'),
    ];

    // then each year counts from 1 without a gap
    expect(handles).toEqual([
      'INV-2025-0001',
      'INV-2025-0002',
      'INV-2026-0001',
      'INV-2026-0002',
      'INV-2025-0003',
    ]);
    const counters = await t.sql(
      `select period_key, last_number::int from invoice_numbering
       where environment_id = $1 and type = 'invoice' order by period_key`,
      [env.id],
    );
    expect(counters).toEqual([
      { period_key: '', last_number: 0 },
      { period_key: '2025', last_number: 3 },
      { period_key: '2026', last_number: 2 },
    ]);
  });

  it('refuses patterns with coded errors', async () => {
    const env = await t.createEnvironment('Series rules');
    const errorOf = async (input: Record<string, unknown>) => (await configure(env, input)).userErrors;

    expect(await errorOf({ pattern: 'INV-{DD}-{SEQ:6}' })).toEqual([
      { field: ['input', 'pattern'], message: expect.stringContaining('{DD}'), code: 'UNKNOWN_TOKEN' },
    ]);
    expect(await errorOf({ pattern: 'INV-{SEQ:6' })).toMatchObject([{ code: 'UNKNOWN_TOKEN' }]);
    expect(await errorOf({ pattern: 'INV-{YYYY}' })).toEqual([
      { field: ['input', 'pattern'], message: expect.any(String), code: 'MISSING_SEQUENCE' },
    ]);
    expect(await errorOf({ pattern: `${'A'.repeat(25)}-{SEQ:6}` })).toEqual([
      { field: ['input', 'pattern'], message: expect.any(String), code: 'PATTERN_TOO_LONG' },
    ]);
    expect(await errorOf({ pattern: `${'A'.repeat(61)}{SEQ:1}` })).toMatchObject([
      { code: 'PATTERN_TOO_LONG' },
    ]);
    expect(await errorOf({ pattern: 'INV {SEQ:6}' })).toMatchObject([{ code: 'INVALID_INPUT' }]);
    expect(await errorOf({ pattern: 'INV-{SEQ:6}', yearlyReset: true })).toEqual([
      { field: ['input', 'pattern'], message: expect.any(String), code: 'MISSING_YEAR' },
    ]);
    expect(await errorOf({ pattern: 'CN-{SEQ:6}' })).toMatchObject([{ code: 'DUPLICATE' }]);

    // and nothing was changed by the refused updates
    const listed = await f.gql(env, '{ invoiceNumbering { pattern yearlyReset } }');
    expect(listed.invoiceNumbering[0]).toEqual({ pattern: 'INV-{SEQ:6}', yearlyReset: false });
    const both = await t.graphql(
      NUMBERING,
      { type: 'invoice', input: { prefix: 'A-', pattern: 'A-{SEQ:2}' } },
      { env },
    );
    expect(both.body.errors[0].extensions).toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('stays gapless per year when 40 drafts of two years are booked concurrently, whatever bookings fail', async () => {
    // given 40 drafts dated in two years under a yearly series; every seventh fails inside its
    // booking transaction after taking its number
    const env = await t.createEnvironment('Series concurrent');
    const customerId = await f.createCustomer(env);
    await configure(env, { pattern: 'S{YY}-{SEQ:5}', yearlyReset: true });
    const ids = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        draft(env, customerId, {
          date: index % 2 === 0 ? '2025-06-01' : '2026-06-01',
          memo: index % 7 === 3 ? 'fail-series' : null,
        }),
      ),
    );
    await t.sql(`
      create or replace function fail_series_bookings() returns trigger language plpgsql as $$
      begin
        if new.status = 'booked' and new.memo = 'fail-series' then raise exception 'forced booking failure'; end if;
        return new;
      end $$;
      create trigger fail_series_bookings before update on invoice
        for each row execute function fail_series_bookings();
    `);

    try {
      // when all are booked at once
      const responses = await Promise.all(ids.map((id) => t.graphql(BOOK, { id }, { env })));

      // then the failed ones stay unnumbered and each year holds exactly 1..N
      const failed = responses.filter((response) => response.body.errors);
      expect(failed).toHaveLength(ids.filter((_, index) => index % 7 === 3).length);
      const rows = await t.sql<{ date: string; handle: string | null }>(
        "select to_char(date, 'YYYY') as date, handle from invoice where environment_id = $1",
        [env.id],
      );
      for (const year of ['2025', '2026']) {
        const handles = rows.flatMap((row) => (row.date === year && row.handle ? [row.handle] : [])).sort();
        expect(handles.length).toBeGreaterThan(0);
        expect(handles).toEqual(
          Array.from(
            { length: handles.length },
            (_, index) => `S${year.slice(2)}-${String(index + 1).padStart(5, '0')}`,
          ),
        );
      }
    } finally {
      await t.sql('drop trigger fail_series_bookings on invoice; drop function fail_series_bookings();');
    }
  });
});
