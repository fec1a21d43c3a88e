import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/app.ts';
import { type Orm, openOrm } from '../../src/db/orm.ts';
import { entities } from '../../src/modules/registry.ts';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';

const rateLimit = { maxRequests: 3, windowSeconds: 3600 };
const t = setupTestApp({ rateLimit });

describe('rate limit per API token', () => {
  let env: TestEnvironment;
  let other: TestEnvironment;
  let otherProcess: { orm: Orm; app: App };

  beforeAll(async () => {
    env = await t.createEnvironment('Limited');
    other = await t.createEnvironment('Other');
    // A second app on its own connection pool stands for a second server process.
    const orm = await openOrm(t.databaseUrl, { entities, poolMax: 2 });
    otherProcess = { orm, app: createApp({ orm, logger: pino({ level: 'silent' }), rateLimit }) };
  });

  afterAll(async () => {
    await otherProcess.orm.close();
  });

  const query = (who: TestEnvironment) =>
    t.graphql('{ customers(first: 1) { edges { cursor } } }', {}, { env: who });

  it('answers 429 with Retry-After once the window’s budget is spent, on both faces and all processes', async () => {
    // given three requests in the window, one of them served by the other process
    expect((await query(env)).status).toBe(200);
    const elsewhere = await otherProcess.app.fetch('http://test/graphql', {
      method: 'POST',
      headers: { ...env.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(elsewhere.status).toBe(200);
    expect((await t.rest('GET', '/customers/0190a3f0-0000-7000-8000-000000000000', { env })).status).toBe(
      404,
    );

    // when a fourth arrives
    const refused = await query(env);
    const refusedRest = await t.rest('GET', '/customers/0190a3f0-0000-7000-8000-000000000000', { env });

    // then it is refused with a problem telling when to retry
    expectProblem(refused, 429);
    expectProblem(refusedRest, 429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(rateLimit.windowSeconds);

    // and another token is not affected
    expect((await query(other)).status).toBe(200);
  });

  it('opens a new window once the old one has passed', async () => {
    expectProblem(await query(env), 429);
    await t.sql("update rate_limit_counter set window_start = now() - interval '2 hours'");
    expect((await query(env)).status).toBe(200);
  });

  it('leaves unauthenticated probes alone', async () => {
    for (let i = 0; i < rateLimit.maxRequests + 1; i++) {
      expect((await t.rest('GET', '/health')).status).toBe(200);
    }
  });
});
