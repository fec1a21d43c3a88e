import type { JobHelpers } from 'graphile-worker';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/app.ts';
import { APP_ROLE, type Orm, openOrm } from '../../src/db/orm.ts';
import { BILLING_RUN_TASK, billingTasks } from '../../src/modules/billing/billing.jobs.ts';
import { entities } from '../../src/modules/registry.ts';
import { billingFixtures } from '../subscription/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = billingFixtures(t);

/** What a server connection carries from one transaction to the next, read past the pool's client class. */
type SessionState = {
  user: string;
  role: string;
  environment: string;
  prepared: number;
  advisory: number;
};

const SESSION_STATE = `select current_user as user, current_setting('role') as role,
  coalesce(current_setting('app.environment_id', true), '') as environment,
  (select count(*)::int from pg_prepared_statements) as prepared,
  (select count(*)::int from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()) as advisory`;

/** The session state of every connection the pool holds: all of them checked out at once. */
async function everyConnection(orm: Orm): Promise<SessionState[]> {
  const pool = (await orm.em.getConnection().getNativeClient()) as unknown as pg.Pool;
  const clients: pg.PoolClient[] = [];
  try {
    for (let i = 0; i < Math.max(pool.totalCount, 1); i += 1) clients.push(await pool.connect());
    const states: SessionState[] = [];
    for (const client of clients) {
      // Plain pg: no transaction and no role around it, so it sees the session as a pooler hands it on.
      const query = pg.Client.prototype.query as (text: string) => Promise<pg.QueryResult<SessionState>>;
      const result = await query.call(client, SESSION_STATE);
      states.push(result.rows[0] as SessionState);
    }
    return states;
  } finally {
    for (const client of clients) client.release();
  }
}

const lines: { level: number; msg: string; environmentId?: string }[] = [];
const logger = pino(
  { level: 'debug' },
  { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) },
);
const helpers = { abortSignal: undefined, addJob: async () => {} } as unknown as JobHelpers;

describe('nothing a request or a job does outlives its transaction (transaction pooling)', () => {
  let env: TestEnvironment;
  // The configuration behind PgBouncer in transaction mode: no named statements.
  let orm: Orm;
  let app: App;
  let owner: string;

  beforeAll(async () => {
    env = await t.createEnvironment('Pooled');
    orm = await openOrm(t.databaseUrl, { entities, poolMax: 4, preparedStatements: false });
    app = createApp({ orm, logger: pino({ level: 'silent' }) });
    const [row] = await t.sql<{ user: string }>('select current_user as user');
    owner = row?.user as string;
    const product = await f.createProduct(env);
    const price = await f.createPrice(env, { pricing: { eur: { amount: 1000 } } });
    const customerId = await f.createCustomer(env);
    await f.subscribe(env, {
      customerId,
      term: { start: '2026-01-01' },
      items: [{ productId: product.id, priceId: price.id }],
    });
  });

  afterAll(async () => {
    await orm.close();
  });

  const request = async (path: string, init: { method?: string; body?: unknown } = {}) => {
    const response = await app.fetch(`http://test${path}`, {
      method: init.method ?? 'GET',
      headers: { ...env.headers, 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  it('leaves every pooled connection as the owner without role, environment, statements or locks', async () => {
    // when REST and GraphQL requests (loaders included) and a scheduled billing run go through the pool
    const created = await request('/customers', { method: 'POST', body: { name: 'Grace', currency: 'EUR' } });
    expect(created.status).toBe(201);
    const read = await Promise.all([
      request(`/customers/${created.body.id}`),
      request('/graphql', {
        method: 'POST',
        body: {
          query:
            '{ customers(first: 10) { edges { node { id name } } } invoices(first: 10) { edges { node { id customerId customer { name } items { id } } } } }',
        },
      }),
      request('/invoices'),
    ]);
    expect(read.map((response) => response.status)).toEqual([200, 200, 200]);
    await billingTasks({ orm, logger, settings: { eventRetentionDays: 30, mail: null }, eventListeners: [] })[
      BILLING_RUN_TASK
    ]?.({ environmentId: env.id }, helpers);
    const invoices = await request('/graphql', {
      method: 'POST',
      body: {
        query: '{ invoices(first: 50) { edges { node { id customerId customer { name } items { id } } } } }',
      },
    });
    expect(invoices.status).toBe(200);
    expect(invoices.body.data.invoices.edges.length).toBeGreaterThan(0);

    // then each statement ran as the application role, inside its transaction
    const [inside] = await orm.em.getConnection().execute<{ user: string }[]>('select current_user as user');
    expect(inside).toEqual({ user: APP_ROLE });

    // and every connection the pool holds is back to the session it started with
    const states = await everyConnection(orm);
    expect(states.length).toBeGreaterThan(1);
    for (const state of states) {
      expect(state).toEqual({ user: owner, role: 'none', environment: '', prepared: 0, advisory: 0 });
    }
    const held = await t.sql(
      `select count(*)::int as count from pg_locks l join pg_database d on d.oid = l.database
       where l.locktype = 'advisory' and d.datname = current_database()`,
    );
    expect(held).toEqual([{ count: 0 }]);
  });

  it('records a scheduled run that finds the lock taken, as an event and a warning', async () => {
    // given another run holding the environment's lock
    const holder = new pg.Client({ connectionString: t.databaseUrl });
    await holder.connect();
    try {
      await holder.query(`select pg_advisory_lock(hashtextextended('billing-run:' || $1, 0))`, [env.id]);

      // when the scheduled run's job comes
      await billingTasks({
        orm,
        logger,
        settings: { eventRetentionDays: 30, mail: null },
        eventListeners: [],
      })[BILLING_RUN_TASK]?.({ environmentId: env.id }, helpers);
    } finally {
      await holder.end();
    }

    // then it ran nothing, and said so: a warning and an event the API reads
    expect(lines.filter((line) => line.level === 40 && line.environmentId === env.id)).toEqual([
      expect.objectContaining({ msg: 'billing run skipped: another run of the environment is under way' }),
    ]);
    const events = await t.graphql(
      '{ events(first: 10, type: BILLING_RUN_SKIPPED) { edges { node { type objectId data } } } }',
      {},
      { env },
    );
    expect(events.body.data.events.edges).toEqual([
      {
        node: {
          type: 'BILLING_RUN_SKIPPED',
          objectId: env.id,
          data: expect.objectContaining({
            triggeredBy: 'schedule',
            reason: 'another billing run of this environment was under way',
            runningRunId: null,
          }),
        },
      },
    ]);
  });
});
