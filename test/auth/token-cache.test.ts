import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/app.ts';
import { AccessService, hashSecret } from '../../src/auth/access.service.ts';
import { TokenCache } from '../../src/auth/token-cache.ts';
import { type Orm, openOrm } from '../../src/db/orm.ts';
import { entities } from '../../src/modules/registry.ts';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();

/** An app with its own pool and token cache: a server process of its own. */
type Instance = { orm: Orm; cache: TokenCache; app: App };

async function startInstance(databaseUrl: string): Promise<Instance> {
  const orm = await openOrm(databaseUrl, { entities, poolMax: 2 });
  const cache = new TokenCache(databaseUrl, 60_000);
  await cache.start();
  return { orm, cache, app: createApp({ orm, logger: pino({ level: 'silent' }), tokenCache: cache }) };
}

const customers = (instance: Instance, env: TestEnvironment) =>
  instance.app.fetch('http://test/graphql', {
    method: 'POST',
    headers: { ...env.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ customers(first: 1) { edges { cursor } } }' }),
  });

describe('token cache with revocation by notification', () => {
  let first: Instance;
  let second: Instance;

  beforeAll(async () => {
    first = await startInstance(t.databaseUrl);
    second = await startInstance(t.databaseUrl);
  });

  afterAll(async () => {
    for (const instance of [first, second]) {
      await instance.cache.close();
      await instance.orm.close();
    }
  });

  it('serves a token from memory, and refuses it on every instance as soon as another revokes it', async () => {
    // given a token both instances have seen (and kept)
    const env = await t.createEnvironment('Cached');
    expect((await customers(first, env)).status).toBe(200);
    expect((await customers(second, env)).status).toBe(200);
    expect(second.cache.get(hashSecret(env.token))).toBeDefined();

    // when the first instance's database session revokes it (as the CLI does)
    const [row] = await t.sql<{ id: string }>('select id from api_token where secret_hash = $1', [
      hashSecret(env.token),
    ]);
    expect(await new AccessService(t.adminOrm.em.fork()).revokeToken(row?.id as string)).toBe(true);

    // then the very next request is refused on both, the one that did not revoke included
    expectProblem(await t.rest('POST', '/graphql', { env, body: { query: '{ __typename }' } }), 401);
    const refused = await second.app.fetch('http://test/graphql', {
      method: 'POST',
      headers: { ...env.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(refused.status).toBe(401);
    expect((await customers(first, env)).status).toBe(401);
  });

  it('forgets a token whose grants change, and an unrelated last-used update keeps the cache', async () => {
    // given a cached token
    const env = await t.createEnvironment('Regranted');
    const other = await t.createEnvironment('Elsewhere');
    expect((await customers(second, env)).status).toBe(200);
    const before = second.cache.generation();

    // when only its last use is recorded, nothing is forgotten
    await t.sql('update api_token set last_used_at = now() where secret_hash = $1', [hashSecret(env.token)]);
    await customers(second, env);
    expect(second.cache.generation()).toBe(before);

    // when it loses its environment by plain SQL, the next request is forbidden
    await t.sql('update api_token set environment_ids = $1 where secret_hash = $2', [
      [other.id],
      hashSecret(env.token),
    ]);
    expectProblem(await t.rest('POST', '/graphql', { env, body: {} }), 403);
    expect((await customers(second, env)).status).toBe(403);
  });

  it('reads tokens per request while its listening connection is down, and is back once reconnected', async () => {
    // given a cached token and the listening session killed
    const env = await t.createEnvironment('Listener lost');
    expect((await customers(second, env)).status).toBe(200);
    await t.sql(
      `select pg_terminate_backend(pid) from pg_stat_activity
       where datname = current_database() and query = 'listen api_token_changed'`,
    );
    await expect.poll(() => second.cache.active).toBe(false);

    // when the token is revoked while no notification can arrive, it is refused anyway
    await t.sql('update api_token set revoked_at = now() where secret_hash = $1', [hashSecret(env.token)]);
    expect((await customers(second, env)).status).toBe(401);

    // and the cache listens again on its own
    await expect.poll(() => second.cache.active, { timeout: 5_000 }).toBe(true);
    const fresh = await t.createEnvironment('After reconnect');
    expect((await customers(second, fresh)).status).toBe(200);
    expect(second.cache.get(hashSecret(fresh.token))).toBeDefined();
  });
});
