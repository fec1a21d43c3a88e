import { randomUUID } from 'node:crypto';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GRAPHQL_LIMITS } from '../../src/limits/graphql-limits.ts';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

/** As many root fields as one document may carry: one without an alias, the others aliased. */
const FIELDS = GRAPHQL_LIMITS.maxAliases + 1;
/** The field that fails (when failures are injected): one in the middle, so fields run before and after it. */
const FAILING = 7;

const key = (i: number) => (i === 0 ? 'invoiceSettle' : `s${i}`);

/** One document settling the invoice `FIELDS` times, 1 minor unit each; field FAILING carries the note `fail`. */
const SETTLE_MANY = `mutation ($id: UUID!) {
  ${Array.from(
    { length: FIELDS },
    (_, i) =>
      `${i === 0 ? '' : `${key(i)}: `}invoiceSettle(id: $id, input: { date: "2026-04-10", amount: 1${i === FAILING ? ', note: "fail"' : ''} }) {
        settlement { id amount } invoice { totalDue } userErrors { code } }`,
  ).join('\n')}
}`;

const removeFailure = () => t.sql('drop trigger if exists refuse_marked_settlement on settlement');

/**
 * A database failure in one field, as a real one would surface (an unexpected error, not a userError):
 * while this trigger exists, committing a settlement noted `fail` fails. It fires at commit, where a
 * serialization failure or a deadlock would, so nothing short of the field's own transaction keeps
 * the other fields' work.
 */
async function injectFailure() {
  await removeFailure();
  await t.sql(`create or replace function refuse_marked_settlement() returns trigger language plpgsql as $$
    begin raise exception 'injected failure'; end $$`);
  await t.sql(`create constraint trigger refuse_marked_settlement after insert on settlement
    deferrable initially deferred for each row when (new.note = 'fail') execute function refuse_marked_settlement()`);
}

describe('mutation documents: each root field in a transaction of its own', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment();
    customerId = await f.createCustomer(env, { currency: 'DKK' });
    await f.createTaxCode(env, 'VAT25', '25');
  });

  beforeEach(removeFailure);

  /** A booked invoice of 1000 (800 plus 25 % tax). */
  async function bookedInvoice(): Promise<string> {
    const invoice = await f.createInvoice(env, {
      customerId,
      items: [{ quantity: 1, unitAmount: 800, title: 'Line', taxCode: 'VAT25' }],
    });
    await f.gql(env, 'mutation ($id: UUID!) { invoiceBook(id: $id) { userErrors { code } } }', {
      id: invoice.id,
    });
    return invoice.id;
  }

  const storedSettlements = async (invoiceId: string) =>
    (
      await t.sql<{ id: string }>('select id from settlement where invoice_id = $1 order by id', [invoiceId])
    ).map((row) => row.id);

  /** The settlement ids an answer reports, in document order. */
  const reportedSettlements = (data: Record<string, { settlement: { id: string } | null } | null>) =>
    Object.values(data).flatMap((payload) => (payload?.settlement ? [payload.settlement.id] : []));

  it('settles one invoice from every field of one document, and a failed field nulls only itself', async () => {
    // given a booked invoice, and a database that refuses one of the document's settlements
    const invoiceId = await bookedInvoice();
    await injectFailure();

    // when one document settles it FIELDS times
    const response = await t.graphql(SETTLE_MANY, { id: invoiceId }, { env });

    // then every other field committed and says so, each seeing the ones before it
    expect(response.status).toBe(200);
    const data = response.body.data;
    expect(Object.keys(data)).toEqual(Array.from({ length: FIELDS }, (_, i) => key(i)));
    let due = 1000;
    for (let i = 0; i < FIELDS; i += 1) {
      if (i === FAILING) continue;
      due -= 1;
      expect(data[key(i)]).toEqual({
        settlement: { id: expect.any(String), amount: 1 },
        invoice: { totalDue: due },
        userErrors: [],
      });
    }
    // and the failed one is null with its error at its path, masked
    expect(data[key(FAILING)]).toBeNull();
    expect(response.body.errors).toEqual([
      expect.objectContaining({ message: 'Unexpected error.', path: [key(FAILING)] }),
    ]);
    // and what the answer reports is exactly what the database holds
    const reported = reportedSettlements(data);
    expect(reported).toHaveLength(FIELDS - 1);
    expect(await storedSettlements(invoiceId)).toEqual([...reported].sort());
  });

  it('runs fields in document order, after fragments and @skip/@include', async () => {
    const invoiceId = await bookedInvoice();
    const response = await t.graphql(
      `mutation ($id: UUID!, $skip: Boolean!) {
        first: invoiceSettle(id: $id, input: { date: "2026-04-10", amount: 10 }) { invoice { totalDue } }
        skipped: invoiceSettle(id: $id, input: { date: "2026-04-10", amount: 20 }) @skip(if: $skip) { invoice { totalDue } }
        ... on Mutation { inline: invoiceSettle(id: $id, input: { date: "2026-04-10", amount: 30 }) { invoice { totalDue } } }
        ...Last
      }
      fragment Last on Mutation { last: invoiceSettle(id: $id, input: { date: "2026-04-10", amount: 40 }) { invoice { totalDue } } }`,
      { id: invoiceId, skip: true },
      { env },
    );

    expect(response.body).toEqual({
      data: {
        first: { invoice: { totalDue: 990 } },
        inline: { invoice: { totalDue: 960 } },
        last: { invoice: { totalDue: 920 } },
      },
    });
    expect(await storedSettlements(invoiceId)).toHaveLength(3);
  });

  describe('with an Idempotency-Key', () => {
    it('replays exactly the first answer of a document whose fields all succeeded', async () => {
      // given a document that succeeded under a key
      const invoiceId = await bookedInvoice();
      const headers = { 'idempotency-key': randomUUID() };
      const first = await t.graphql(SETTLE_MANY, { id: invoiceId }, { env, headers });
      expect(first.body.errors).toBeUndefined();
      expect(reportedSettlements(first.body.data)).toHaveLength(FIELDS);

      // when it is sent again
      const replay = await t.graphql(SETTLE_MANY, { id: invoiceId }, { env, headers });

      // then the answer is the first one, marked replayed, and nothing was settled again
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(first.body);
      expect(await storedSettlements(invoiceId)).toHaveLength(FIELDS);
    });

    it('keeps and reports the fields that committed when one fails; a retry runs only the failed one', async () => {
      // given a document under a key whose one field fails
      const invoiceId = await bookedInvoice();
      const headers = { 'idempotency-key': randomUUID() };
      await injectFailure();
      const first = await t.graphql(SETTLE_MANY, { id: invoiceId }, { env, headers });

      // then the other fields committed, and the answer shows exactly those
      expect(first.body.data[key(FAILING)]).toBeNull();
      const committed = reportedSettlements(first.body.data);
      expect(committed).toHaveLength(FIELDS - 1);
      expect(await storedSettlements(invoiceId)).toEqual([...committed].sort());

      // when the cause is gone and the request is retried with its key
      await removeFailure();
      const retry = await t.graphql(SETTLE_MANY, { id: invoiceId }, { env, headers });

      // then the committed fields answer as they first did, and only the failed one ran again
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body.errors).toBeUndefined();
      for (let i = 0; i < FIELDS; i += 1) {
        if (i !== FAILING) expect(retry.body.data[key(i)]).toEqual(first.body.data[key(i)]);
      }
      expect(retry.body.data[key(FAILING)]).toMatchObject({ settlement: { amount: 1 }, userErrors: [] });
      const all = reportedSettlements(retry.body.data);
      expect(await storedSettlements(invoiceId)).toEqual([...all].sort());

      // and from now on every retry is that answer
      const again = await t.graphql(SETTLE_MANY, { id: invoiceId }, { env, headers });
      expect(again.body).toEqual(retry.body);
      expect(await storedSettlements(invoiceId)).toHaveLength(FIELDS);
    });
  });
});
