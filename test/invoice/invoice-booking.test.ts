import { beforeAll, describe, expect, it } from 'vitest';
import { EXECUTION_LIMITS } from '../../src/config.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { invoiceFixtures } from './fixtures.ts';

// 200 concurrent bookings queue behind the numbering row lock; on a loaded machine the last ones wait
// past the 10 s request deadline, which is not what these tests are about (test/limits covers it).
const t = setupTestApp({ executionLimits: { ...EXECUTION_LIMITS, timeoutMs: 120_000 } });
const f = invoiceFixtures(t);

const BOOK = `mutation ($id: UUID!) {
  invoiceBook(id: $id) { invoice { id handle status bookedAt customerId customer { name handle billingAddress { city } } } userErrors { field message code } }
}`;
const NUMBERING = `mutation ($type: InvoiceType!, $prefix: String!) {
  invoiceNumberingUpdate(type: $type, input: { prefix: $prefix }) {
    numbering { type prefix lastNumber nextHandle } userErrors { field message code }
  }
}`;

const ITEM = { quantity: 1, unitAmount: 1000, title: 'Subscription' };

async function draft(env: TestEnvironment, customerId: string, body: Record<string, unknown> = {}) {
  return (await f.createInvoice(env, { customerId, items: [ITEM], ...body })).id as string;
}

describe('booking', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment();
    customerId = await f.createCustomer(env, {
      name: 'Grace Hopper',
      handle: 'grace',
      billingAddress: { city: 'Arlington' },
    });
  });

  it('assigns the next number and freezes the customer onto the invoice', async () => {
    // given a draft, which shows the live customer
    const id = await draft(env, customerId);

    // when it is booked and the customer is renamed and moves afterwards
    const data = await f.gql(env, BOOK, { id });
    await f.gql(
      env,
      `mutation ($id: UUID!) { customerUpdate(id: $id, input: { name: "Grace B. Hopper", handle: "gbh",
        billingAddress: { city: "New York" } }) { userErrors { message } } }`,
      { id: customerId },
    );

    // then the booked invoice keeps the customer as it was when booked, on both faces
    expect(data.invoiceBook).toEqual({
      invoice: {
        id,
        handle: 'INV-000001',
        status: 'booked',
        bookedAt: expect.any(String),
        customerId,
        customer: {
          name: 'Grace Hopper',
          handle: 'grace',
          billingAddress: { city: 'Arlington' },
        },
      },
      userErrors: [],
    });
    const read = await t.rest('GET', `/invoices/${id}`, { env });
    expect(read.body).toMatchObject({
      handle: 'INV-000001',
      status: 'booked',
      updatedAt: expect.any(String),
      customer: {
        name: 'Grace Hopper',
        handle: 'grace',
        billingAddress: { city: 'Arlington', street1: null },
      },
    });

    // while a draft shows the customer as it is now
    const laterDraft = await t.rest('GET', `/invoices/${await draft(env, customerId)}`, { env });
    expect(laterDraft.body.customer).toMatchObject({ name: 'Grace B. Hopper', handle: 'gbh' });
  });

  it('refuses to book a draft without items', async () => {
    const empty = (await f.createInvoice(env, { customerId })).id;

    const data = await f.gql(env, BOOK, { id: empty });

    expect(data.invoiceBook.userErrors).toEqual([
      { field: null, message: expect.any(String), code: 'CONFLICT' },
    ]);
    const [row] = await t.sql('select status, handle from invoice where id = $1', [empty]);
    expect(row).toEqual({ status: 'draft', handle: null });
  });

  it('books one invoice once when asked twice at the same time', async () => {
    const id = await draft(env, customerId);

    const results = await Promise.all([f.gql(env, BOOK, { id }), f.gql(env, BOOK, { id })]);

    const codes = results.map((data) => data.invoiceBook.userErrors[0]?.code ?? 'OK').sort();
    expect(codes).toEqual(['CONFLICT', 'OK']);
    const handle = results.find((data) => data.invoiceBook.invoice)?.invoiceBook.invoice.handle;
    const [counter] = await t.sql<{ last_number: string }>(
      "select last_number from invoice_numbering where environment_id = $1 and type = 'invoice'",
      [env.id],
    );
    expect(handle).toBe(`INV-${counter?.last_number.padStart(6, '0')}`);
  });
});

describe('gapless numbering', () => {
  it('numbers 200 drafts booked concurrently 1..N with no gap and no duplicate, whatever bookings fail', async () => {
    // given 200 drafts, of which every seventh fails inside its booking transaction after taking
    // its number (a trigger stands in for any failure: a crash, a lost connection, a bug)
    const env = await t.createEnvironment('Concurrent');
    const customerId = await f.createCustomer(env);
    const ids = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        draft(env, customerId, { memo: index % 7 === 3 ? 'fail' : null }),
      ),
    );
    await t.sql(`
      create or replace function fail_marked_bookings() returns trigger language plpgsql as $$
      begin
        if new.status = 'booked' and new.memo = 'fail' then raise exception 'forced booking failure'; end if;
        return new;
      end $$;
      create trigger fail_marked_bookings before update on invoice
        for each row execute function fail_marked_bookings();
    `);

    try {
      // when all are booked at once, over the app's pool of connections
      const responses = await Promise.all(ids.map((id) => t.graphql(BOOK, { id }, { env })));

      // then the failed ones stay drafts without a number
      const failed = responses.filter((response) => response.body.errors);
      expect(failed).toHaveLength(ids.filter((_, index) => index % 7 === 3).length);
      const rows = await t.sql<{ memo: string | null; status: string; handle: string | null }>(
        'select memo, status, handle from invoice where environment_id = $1',
        [env.id],
      );
      expect(
        rows.filter((row) => row.memo === 'fail').every((row) => row.status === 'draft' && !row.handle),
      ).toBe(true);

      // and the others carry exactly the numbers 1..N
      const handles = rows.flatMap((row) => (row.handle ? [row.handle] : [])).sort();
      const n = ids.length - failed.length;
      expect(handles).toEqual(
        Array.from({ length: n }, (_, index) => `INV-${String(index + 1).padStart(6, '0')}`),
      );
      const [counter] = await t.sql('select last_number from invoice_numbering where environment_id = $1', [
        env.id,
      ]);
      expect(counter).toEqual({ last_number: String(n) });
    } finally {
      await t.sql('drop trigger fail_marked_bookings on invoice; drop function fail_marked_bookings();');
    }
  }, 180_000);

  it('counts each environment and each type on its own', async () => {
    // given two environments with drafts
    const [a, b] = [await t.createEnvironment('A'), await t.createEnvironment('B')];
    const [customerA, customerB] = [await f.createCustomer(a), await f.createCustomer(b)];
    const draftsA = [await draft(a, customerA), await draft(a, customerA), await draft(a, customerA)];
    const draftsB = [await draft(b, customerB), await draft(b, customerB)];

    // when they are booked interleaved, with a credit note in A between them
    const book = async (env: TestEnvironment, id: string) =>
      (await f.gql(env, BOOK, { id })).invoiceBook.invoice.handle as string;
    const handles = [
      await book(a, draftsA[0] as string),
      await book(b, draftsB[0] as string),
      await book(a, draftsA[1] as string),
    ];
    const creditNote = await f.gql(
      a,
      'mutation ($id: UUID!) { creditNoteCreate(invoiceId: $id) { creditNote { id } } }',
      { id: draftsA[0] },
    );
    handles.push(
      await book(a, creditNote.creditNoteCreate.creditNote.id),
      await book(b, draftsB[1] as string),
      await book(a, draftsA[2] as string),
    );

    // then
    expect(handles).toEqual([
      'INV-000001',
      'INV-000001',
      'INV-000002',
      'CN-000001',
      'INV-000002',
      'INV-000003',
    ]);
  });

  it('uses the prefix configured for the environment and type', async () => {
    // given
    const env = await t.createEnvironment('Prefixed');
    const customerId = await f.createCustomer(env);
    const first = await draft(env, customerId);
    expect((await f.gql(env, BOOK, { id: first })).invoiceBook.invoice.handle).toBe('INV-000001');

    // when
    const configured = await f.gql(env, NUMBERING, { type: 'invoice', prefix: '2026/F-' });

    // then the next numbers carry it and continue the count; issued numbers keep theirs
    expect(configured.invoiceNumberingUpdate).toEqual({
      numbering: { type: 'invoice', prefix: '2026/F-', lastNumber: 1, nextHandle: '2026/F-000002' },
      userErrors: [],
    });
    const second = await draft(env, customerId);
    expect((await f.gql(env, BOOK, { id: second })).invoiceBook.invoice.handle).toBe('2026/F-000002');
    expect((await t.rest('GET', `/invoices/${first}`, { env })).body.handle).toBe('INV-000001');
    const listed = await f.gql(env, '{ invoiceNumbering { type prefix lastNumber nextHandle } }');
    expect(listed.invoiceNumbering).toEqual([
      { type: 'invoice', prefix: '2026/F-', lastNumber: 2, nextHandle: '2026/F-000003' },
      { type: 'credit_note', prefix: 'CN-', lastNumber: 0, nextHandle: 'CN-000001' },
    ]);
  });

  it('refuses a prefix that ends with a digit or that the other type uses', async () => {
    const env = await t.createEnvironment('Prefix rules');

    const digit = await t.graphql(NUMBERING, { type: 'invoice', prefix: 'INV2026' }, { env });
    const taken = await f.gql(env, NUMBERING, { type: 'credit_note', prefix: 'INV-' });

    expect(digit.body.errors[0].extensions).toMatchObject({
      code: 'INVALID_INPUT',
      errors: [{ pointer: '/input/prefix', detail: expect.stringContaining('digit') }],
    });
    expect(taken.invoiceNumberingUpdate.userErrors).toEqual([
      { field: ['input', 'prefix'], message: expect.any(String), code: 'DUPLICATE' },
    ]);
  });

  it('answers CONFLICT when an earlier prefix makes the next number one already issued', async () => {
    // given INV-000001 issued, then the invoice prefix changed and the credit notes given INV-
    const env = await t.createEnvironment('Prefix reuse');
    const customerId = await f.createCustomer(env);
    const invoice = await draft(env, customerId);
    await f.gql(env, BOOK, { id: invoice });
    await f.gql(env, NUMBERING, { type: 'invoice', prefix: 'F-' });
    await f.gql(env, NUMBERING, { type: 'credit_note', prefix: 'INV-' });
    const creditNote = await f.gql(
      env,
      'mutation ($id: UUID!) { creditNoteCreate(invoiceId: $id) { creditNote { id } } }',
      {
        id: invoice,
      },
    );

    // when the credit note would become INV-000001
    const data = await f.gql(env, BOOK, { id: creditNote.creditNoteCreate.creditNote.id });

    // then
    expect(data.invoiceBook.userErrors).toEqual([
      { field: null, message: expect.stringContaining('prefix'), code: 'CONFLICT' },
    ]);
    const [counter] = await t.sql(
      "select last_number from invoice_numbering where environment_id = $1 and type = 'credit_note'",
      [env.id],
    );
    expect(counter).toEqual({ last_number: '0' });
  });
});
