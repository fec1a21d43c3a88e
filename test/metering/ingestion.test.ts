import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPartitionsAhead } from '../../src/modules/metering/metering.jobs.ts';
import { billingFixtures } from '../subscription/fixtures.ts';
import { gql } from '../support/catalog.ts';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { type EventBody, meteringFixtures, txn } from './fixtures.ts';

const t = setupTestApp();
const billing = billingFixtures(t);
const metering = meteringFixtures(t);

let env: TestEnvironment;
let customer: string;

const AT = '2026-03-10T12:00:00Z';

const event = (overrides: Partial<EventBody> = {}): EventBody => ({
  transactionId: txn(),
  customer,
  metric: 'storage',
  timestamp: AT,
  properties: { gb: 1 },
  ...overrides,
});

beforeAll(async () => {
  env = await t.createEnvironment('Ingestion');
  customer = await billing.createCustomer(env, { handle: 'globex' });
  await metering.createMetric(env, { code: 'storage', aggregation: 'sum', fieldName: 'gb' });
  await metering.createMetric(env, { code: 'calls', aggregation: 'count' });
  await metering.createMetric(env, { code: 'visitors', aggregation: 'unique_count', fieldName: 'visitor' });
});

const storedCount = async (environmentId: string) =>
  Number(
    (
      await t.sql<{ count: string }>('select count(*) from usage_event where environment_id = $1', [
        environmentId,
      ])
    )[0]?.count,
  );

describe('POST /events', () => {
  it('answers each event on its own: accepted, or rejected with its reason, never all or nothing', async () => {
    const future = new Date(Date.now() + 25 * 60 * 60 * 1000).toISOString();
    const nearFuture = new Date(Date.now() + 23 * 60 * 60 * 1000).toISOString();
    const before = await storedCount(env.id);
    const body = await metering.ingestOk(env, [
      event(),
      event({ customer: 'globex' }),
      event({ customer: 'nobody' }),
      event({ customer: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' }),
      event({ metric: 'unknown' }),
      event({ timestamp: future }),
      event({ timestamp: nearFuture }),
      event({ properties: {} }),
      event({ properties: { gb: 'lots' } }),
      event({ properties: { gb: true } }),
      event({ metric: 'calls', properties: undefined }),
      event({ metric: 'visitors', properties: { visitor: 'v1' } }),
      event({ metric: 'visitors', properties: { other: 'v1' } }),
      { ...event(), timestamp: 'yesterday' },
      { ...event(), extra: 1 },
      { transactionId: txn() },
    ]);
    expect(
      body.results.map((result: { status: string; reason: string | null }) => result.reason ?? result.status),
    ).toEqual([
      'accepted',
      'accepted',
      'unknown_customer',
      'unknown_customer',
      'unknown_metric',
      'timestamp_in_future',
      'accepted',
      'property_missing',
      'property_not_a_number',
      'property_not_a_number',
      'accepted',
      'accepted',
      'property_missing',
      'invalid',
      'invalid',
      'invalid',
    ]);
    expect(body).toMatchObject({ accepted: 5, duplicates: 0, rejected: 11 });
    expect(body.results[2]).toMatchObject({ status: 'rejected', message: expect.stringContaining('nobody') });
    expect(await storedCount(env.id)).toBe(before + 5);
  });

  it('answers a retried transactionId duplicate for ever, and a repeat inside one batch too', async () => {
    const first = event();
    const again = await metering.ingestOk(env, [first, { ...first }]);
    expect(again.results.map((result: { status: string }) => result.status)).toEqual([
      'accepted',
      'duplicate',
    ]);
    const later = await metering.ingestOk(env, [{ ...first, properties: { gb: 5 } }, event()]);
    expect(later.results.map((result: { status: string }) => result.status)).toEqual([
      'duplicate',
      'accepted',
    ]);
    expect(later).toMatchObject({ accepted: 1, duplicates: 1, rejected: 0 });
  });

  it('accepts exactly one of each transactionId under 20 concurrent retries of the same batch', async () => {
    const batch = Array.from({ length: 200 }, (_, index) =>
      event({ timestamp: `2026-03-${String(1 + (index % 28)).padStart(2, '0')}T00:00:00Z` }),
    );
    const before = await storedCount(env.id);
    const responses = await Promise.all(Array.from({ length: 20 }, () => metering.ingest(env, batch)));
    for (const response of responses) expect(response.status, JSON.stringify(response.body)).toBe(200);
    for (const [index, sent] of batch.entries()) {
      const statuses = responses.map((response) => response.body.results[index].status);
      expect(
        statuses.filter((status) => status === 'accepted'),
        sent.transactionId,
      ).toHaveLength(1);
      expect(statuses.filter((status) => status === 'duplicate')).toHaveLength(19);
    }
    expect(responses.reduce((sum, response) => sum + response.body.accepted, 0)).toBe(200);
    expect(await storedCount(env.id)).toBe(before + 200);
  });

  it('refuses a batch that is empty, too large or not a list as a whole (400)', async () => {
    expectProblem(await metering.ingest(env, []), 400);
    expectProblem(
      await metering.ingest(
        env,
        Array.from({ length: 1001 }, () => event()),
      ),
      400,
    );
    const notAList = await t.rest('POST', '/events', { env, body: { events: 'many' } });
    expectProblem(notAList, 400);
  });

  it('makes the partition of a month that has none yet', async () => {
    const body = await metering.ingestOk(env, [event({ timestamp: '2019-07-04T00:00:00Z' })]);
    expect(body.accepted).toBe(1);
    const [row] = await t.sql<{ partition: string }>(
      `select tableoid::regclass::text as partition from usage_event where environment_id = $1 and timestamp < '2020-01-01'`,
      [env.id],
    );
    expect(row?.partition).toBe('usage_event_2019_07');
  });
});

describe('usageEventsIngest (GraphQL)', () => {
  it('answers like POST /events', async () => {
    const sent = event({ metric: 'calls', properties: undefined });
    const mutation = `mutation ($events: [UsageEventInput!]!) { usageEventsIngest(events: $events) {
      batch { accepted duplicates rejected results { transactionId status reason message } } userErrors { code field message } } }`;
    const first = await gql(t, env, mutation, { events: [sent, event({ metric: 'nope' })] });
    expect(first.usageEventsIngest.userErrors).toEqual([]);
    expect(first.usageEventsIngest.batch).toMatchObject({ accepted: 1, rejected: 1 });
    expect(first.usageEventsIngest.batch.results[1]).toMatchObject({
      status: 'rejected',
      reason: 'unknown_metric',
    });
    const retry = await gql(t, env, mutation, { events: [sent] });
    expect(retry.usageEventsIngest.batch.results).toEqual([
      { transactionId: sent.transactionId, status: 'duplicate', reason: null, message: null },
    ]);
    const tooMany = await gql(t, env, mutation, { events: Array.from({ length: 1001 }, () => sent) });
    expect(tooMany.usageEventsIngest.userErrors[0]).toMatchObject({ code: 'INVALID_INPUT' });
  });
});

describe('tenant isolation', () => {
  it('knows no customer or metric of another environment, and shows it none of these events', async () => {
    const other = await t.createEnvironment('Other');
    await metering.createMetric(other, { code: 'storage', aggregation: 'sum', fieldName: 'gb' });
    const otherCustomer = await billing.createCustomer(other, { handle: 'globex' });
    // env's customer id in other: unknown; other's handle globex is other's own customer
    const body = await metering.ingestOk(other, [
      event({ customer }),
      event({ customer: 'globex', transactionId: 'shared-transaction-id' }),
    ]);
    expect(
      body.results.map((result: { reason: string | null; status: string }) => result.reason ?? result.status),
    ).toEqual(['unknown_customer', 'accepted']);
    // transaction ids are per environment: the same one is new in env
    const mine = await metering.ingestOk(env, [event({ transactionId: 'shared-transaction-id' })]);
    expect(mine.accepted).toBe(1);
    // a metric env has and other lacks is unknown there
    const unknown = await metering.ingestOk(other, [
      event({ customer: otherCustomer, metric: 'calls', properties: undefined }),
    ]);
    expect(unknown.results[0].reason).toBe('unknown_metric');
    // the application role, in other's transaction, sees only other's events
    const client = new pg.Client({ connectionString: t.databaseUrl });
    await client.connect();
    try {
      await client.query('begin');
      await client.query('set local role billing_app');
      await client.query(`select set_config('app.environment_id', $1, true)`, [other.id]);
      const { rows } = await client.query(
        `select count(*) filter (where environment_id = $1)::int as own,
           count(*) filter (where environment_id <> $1)::int as foreign from usage_event`,
        [other.id],
      );
      expect(rows[0]).toEqual({ own: 1, foreign: 0 });
      const keys = await client.query('select count(*)::int as count from usage_event_key');
      expect(keys.rows[0].count).toBe(1);
      await client.query('rollback');
    } finally {
      await client.end();
    }
  });

  it('has the partition job make this month and the next three ahead, as the application role may', async () => {
    const made = await createPartitionsAhead(t.orm.em.fork(), new Date('2031-11-15T12:00:00Z'));
    expect(made).toEqual([
      'usage_event_2031_11',
      'usage_event_2031_12',
      'usage_event_2032_01',
      'usage_event_2032_02',
    ]);
    expect(await createPartitionsAhead(t.orm.em.fork(), new Date('2031-11-15T12:00:00Z'))).toEqual(made);
    const bounds = await t.sql<{ bound: string }>(
      `select pg_get_expr(relpartbound, oid) as bound from pg_class where relname = 'usage_event_2031_12'`,
    );
    expect(bounds[0]?.bound).toBe("FOR VALUES FROM ('2031-12-01 00:00:00+00') TO ('2032-01-01 00:00:00+00')");
  });

  it('keeps every partition under the tenant policy and out of the application role’s reach', async () => {
    const partitions = await t.sql<{ name: string; forced: boolean; policies: string; granted: boolean }>(
      `select c.relname as name, c.relforcerowsecurity as forced,
         (select count(*) from pg_policy p where p.polrelid = c.oid)::text as policies,
         has_table_privilege('billing_app', c.oid, 'select') as granted
       from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent = 'usage_event'::regclass order by 1`,
    );
    expect(partitions.length).toBeGreaterThanOrEqual(5);
    for (const partition of partitions) {
      expect(partition).toEqual({ name: partition.name, forced: true, policies: '1', granted: false });
    }
  });
});
