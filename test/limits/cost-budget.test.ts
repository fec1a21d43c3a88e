import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/app.ts';
import { MAX_QUERY_COST } from '../../src/config.ts';
import { type Orm, openOrm } from '../../src/db/orm.ts';
import { entities } from '../../src/modules/registry.ts';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';

// Earns almost nothing back during a test: what is spent stays spent.
const slowBudget = { costPerSecond: 1000, burst: MAX_QUERY_COST };
const t = setupTestApp({ costBudget: slowBudget });

/** 100 invoices × 1,000 lines × 15 fields: about 1.5 million units, well under the per-query limit. */
const HEAVY = `{ invoices(first: 100) { edges { node { id items {
  id title description sku quantity unitAmount amount taxAmount periodStart periodEnd creditedItemId
  discount { amount percentage } tax { taxable taxCode taxRate }
} } } } }`;
const CHEAP = '{ customers(first: 5) { edges { node { id name } } } }';

type Process = { orm: Orm; app: App };

/** A second app on its own connection pool stands for a second server process. */
async function otherProcess(costBudget: { costPerSecond: number; burst: number }): Promise<Process> {
  const orm = await openOrm(t.databaseUrl, { entities, poolMax: 2 });
  return { orm, app: createApp({ orm, logger: pino({ level: 'silent' }), costBudget }) };
}

async function post(process: Process, env: TestEnvironment, query: string) {
  const response = await process.app.fetch('http://test/graphql', {
    method: 'POST',
    headers: { ...env.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

const spent = async (env: TestEnvironment) =>
  t.sql<{ level: number }>(
    `select level from query_cost_budget
     where token_id in (select id from api_token where $1 = any (environment_ids))`,
    [env.id],
  );

describe('query cost budget per API token', () => {
  const processes: Process[] = [];

  afterAll(async () => {
    for (const process of processes) await process.orm.close();
  });

  let heavy: TestEnvironment;
  let calm: TestEnvironment;

  beforeAll(async () => {
    heavy = await t.createEnvironment('Heavy');
    calm = await t.createEnvironment('Calm');
  });

  it('charges a costly query to its token and refuses the next one it cannot pay for, on every process', async () => {
    // given a token that spent most of its burst on one heavy page
    const first = await t.graphql(HEAVY, {}, { env: heavy });
    expect(first.status).toBe(200);
    expect(first.body.errors).toBeUndefined();
    const [budget] = await spent(heavy);
    expect(budget?.level).toBeGreaterThan(1_000_000);

    // when it sends another on a second process, which has not refused it yet
    const other = await otherProcess(slowBudget);
    processes.push(other);
    const refused = await post(other, heavy, HEAVY);

    // then the shared budget refuses it with a coded error and when to retry, without running it
    expect(refused.status).toBe(429);
    expect(refused.body.data).toBeUndefined();
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'QUERY_BUDGET_EXCEEDED' });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(100);
    expect(refused.body.errors[0].extensions.retryAfter).toBe(retryAfter);

    // and that process refuses even a cheap query of the token before reading it, as problem+json
    const throttled = await post(other, heavy, '{ __typename }');
    expectProblem(throttled, 429);
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(100);

    // while other tokens are served as before
    const others = await post(other, calm, HEAVY);
    expect(others.status).toBe(200);
    expect(others.body.errors).toBeUndefined();
  });

  it('lets cheap queries through without charging them', async () => {
    const fresh = await t.createEnvironment('Cheap');
    for (let i = 0; i < 5; i++) {
      const response = await t.graphql(CHEAP, {}, { env: fresh });
      expect(response.status).toBe(200);
      expect(response.body.errors).toBeUndefined();
    }
    expect(await spent(fresh)).toEqual([]);
  });

  it('earns the budget back over time', async () => {
    // given a budget that earns a heavy query back within a second and a half
    const env = await t.createEnvironment('Refilled');
    const quick = await otherProcess({ costPerSecond: 1_000_000, burst: MAX_QUERY_COST });
    processes.push(quick);
    expect((await post(quick, env, HEAVY)).status).toBe(200);
    const refused = await post(quick, env, HEAVY);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);

    // when the token waits as told
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));

    // then the same query runs
    const admitted = await post(quick, env, HEAVY);
    expect(admitted.status).toBe(200);
    expect(admitted.body.errors).toBeUndefined();
  });

  it('adds up concurrent charges of one token instead of losing some', async () => {
    const env = await t.createEnvironment('Concurrent');
    const answers = await Promise.all(Array.from({ length: 4 }, () => t.graphql(HEAVY, {}, { env })));
    // the burst pays for one heavy query: exactly one is served
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(3);
  });
});

describe('query cost budget', () => {
  it('refuses a configured burst smaller than the largest query admitted', async () => {
    const { loadConfig, ConfigError } = await import('../../src/config.ts');
    expect(() => loadConfig({ QUERY_COST_BURST: String(MAX_QUERY_COST - 1) })).toThrow(ConfigError);
    expect(() => loadConfig({ QUERY_COST_BURST: String(MAX_QUERY_COST) })).not.toThrow();
  });
});
