import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/app.ts';
import { AccessService } from '../../src/auth/access.service.ts';
import { migrate, type Orm, openOrm } from '../../src/db/orm.ts';
import { readTransactionsTotal } from '../../src/metrics.ts';
import { entities } from '../../src/modules/registry.ts';
import { embeddedBinDir, type PrimaryWithReplica, startPrimaryWithReplica } from '../support/replica.ts';

type Env = { id: string; headers: Record<string, string> };

/** Reads served so far, by target and reason (db_read_transactions_total). */
async function reads(): Promise<Record<string, number>> {
  const { values } = await readTransactionsTotal.get();
  return Object.fromEntries(values.map((v) => [`${v.labels.target}/${v.labels.reason}`, v.value]));
}

async function readsDuring(work: () => Promise<void>): Promise<Record<string, number>> {
  const before = await reads();
  await work();
  const after = await reads();
  return Object.fromEntries(
    Object.entries(after)
      .map(([key, value]) => [key, value - (before[key] ?? 0)] as const)
      .filter(([, value]) => value > 0),
  );
}

// The replica is a real standby of a primary of its own, made from the embedded package's binaries.
describe.skipIf(!embeddedBinDir())('reads on a streaming replica', () => {
  let cluster: PrimaryWithReplica;
  let orm: Orm;
  let owner: Orm;
  let app: App;
  let reader: Env;
  let writer: Env;
  let stranger: Env;

  const rest = async (method: string, path: string, env: Env, body?: unknown) => {
    const response = await app.fetch(`http://test${path}`, {
      method,
      headers: { ...env.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const graphql = (env: Env, query: string, variables?: Record<string, unknown>) =>
    rest('POST', '/graphql', env, { query, variables });
  const onReplica = (sql: string) => cluster.replicaAdminQuery(sql);

  beforeAll(async () => {
    cluster = await startPrimaryWithReplica();
    owner = await openOrm(cluster.primaryUrl, { entities, poolMax: 1, owner: true });
    await migrate(owner);
    orm = await openOrm(cluster.primaryUrl, { entities, poolMax: 4, replicaUrls: [cluster.replicaUrl] });
    app = createApp({ orm, logger: pino({ level: 'silent' }) });
    const access = new AccessService(owner.em.fork());
    const token = async (environmentId: string) => {
      const { secret } = await access.createToken([environmentId], 'replica test');
      return {
        id: environmentId,
        headers: { authorization: `Bearer ${secret}`, 'x-environment': environmentId },
      };
    };
    const shared = await access.createEnvironment('Replica');
    reader = await token(shared.id);
    writer = await token(shared.id);
    stranger = await token((await access.createEnvironment('Elsewhere')).id);
    await cluster.caughtUp();
  });

  afterAll(async () => {
    await orm?.close();
    await owner?.close();
    await cluster?.stop();
  });

  it('serves plain reads from the replica, and a token its own writes at once while the replica lags', async () => {
    // Replay paused: the replica stays where it is while the primary moves on.
    await onReplica('select pg_wal_replay_pause()');
    let customerId = '';
    const writes = await readsDuring(async () => {
      const created = await rest('POST', '/customers', writer, { name: 'Ada', handle: 'ada' });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      customerId = created.body.id;
      // The writer reads its write back at once, over REST and GraphQL: the primary serves it.
      expect((await rest('GET', `/customers/${customerId}`, writer)).body.name).toBe('Ada');
      const patched = await rest('PATCH', `/customers/${customerId}`, writer, { name: 'Ada Lovelace' });
      expect(patched.status).toBe(200);
      expect((await rest('GET', `/customers/${customerId}`, writer)).body.name).toBe('Ada Lovelace');
      const page = await graphql(writer, '{ customers { edges { node { id name } } } }');
      expect(page.body.data.customers.edges).toEqual([{ node: { id: customerId, name: 'Ada Lovelace' } }]);
    });
    expect(writes).toEqual({ 'primary/own-write-pending': 3 });

    // Another token of the same environment, which wrote nothing, reads the replica: the customer has
    // not arrived there, which proves where its reads went.
    const lagging = await readsDuring(async () => {
      expect((await rest('GET', `/customers/${customerId}`, reader)).status).toBe(404);
      const page = await graphql(reader, '{ customers { edges { node { id } } } }');
      expect(page.body.data.customers.edges).toEqual([]);
    });
    expect(lagging).toEqual({ 'replica/no-own-write': 2 });

    // Replay resumed and caught up: both tokens read the replica, and see the customer.
    await onReplica('select pg_wal_replay_resume()');
    await cluster.caughtUp();
    const replayed = await readsDuring(async () => {
      expect((await rest('GET', `/customers/${customerId}`, writer)).body.name).toBe('Ada Lovelace');
      expect((await rest('GET', `/customers/${customerId}`, reader)).body.name).toBe('Ada Lovelace');
    });
    expect(replayed).toEqual({ 'replica/own-write-replayed': 1, 'replica/no-own-write': 1 });

    // Row-level security holds on the replica: another environment's token sees nothing of it.
    const isolated = await readsDuring(async () => {
      expect((await rest('GET', `/customers/${customerId}`, stranger)).status).toBe(404);
      expect((await rest('GET', '/customers', stranger)).body.data).toEqual([]);
      const page = await graphql(stranger, '{ customers { edges { node { id } } } }');
      expect(page.body.data.customers.edges).toEqual([]);
    });
    expect(isolated).toEqual({ 'replica/no-own-write': 3 });
  });

  it('runs the replica transaction read-only, as the application role, with the environment set', async () => {
    const em = orm.em.fork();
    const replica = em.getConnection('read');
    const trx = await replica.begin({ readOnly: true });
    try {
      await replica.execute("select set_config('app.environment_id', ?, true)", [reader.id], 'all', trx);
      const [row] = await replica.execute<{ role: string; standby: boolean }[]>(
        'select current_user as role, pg_is_in_recovery() as standby',
        [],
        'all',
        trx,
      );
      expect(row).toEqual({ role: 'billing_app', standby: true });
    } finally {
      await trx.rollback().execute();
    }
  });
});
