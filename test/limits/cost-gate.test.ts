import pg from 'pg';
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/app.ts';
import { FREE_QUERY_COST } from '../../src/limits/cost-budget.ts';
import { CostGate } from '../../src/limits/cost-gate.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

/** Priced at 20 invoices of up to 1,000 items each: far above what passes the gate freely. */
const HEAVY = '{ invoices(first: 20) { edges { node { id items { id title } } } } }';
const CHEAP = '{ customers(first: 1) { edges { node { id } } } }';

const t = setupTestApp();

/** Holds the invoice table locked from another session: a query reading it blocks inside its execution. */
async function lockInvoices() {
  const client = new pg.Client({ connectionString: t.databaseUrl });
  await client.connect();
  await client.query('begin');
  await client.query('lock table invoice in access exclusive mode');
  return async () => {
    await client.query('rollback');
    await client.end();
  };
}

async function until(condition: () => boolean, what: string) {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > 5000) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the cost gate', () => {
  let env: TestEnvironment;
  let unlock: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    env = await t.createEnvironment('Gate');
  });

  afterEach(async () => {
    await unlock?.();
    unlock = undefined;
  });

  /** An app whose gate lets one costly operation run at a time. */
  const gated = (timeoutMs: number) => {
    const gate = new CostGate(FREE_QUERY_COST + 1);
    const app = createApp({
      orm: t.orm,
      logger: pino({ level: 'silent' }),
      executionLimits: { timeoutMs, maxResponseBytes: 10 * 1024 * 1024 },
      maxCostInFlight: gate,
    });
    return { gate, app };
  };

  const send = async (app: App, query: string, signal?: AbortSignal) => {
    const response = await app.fetch('http://test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...env.headers },
      body: JSON.stringify({ query }),
      signal,
    });
    return { status: response.status, headers: response.headers, body: await response.json() };
  };

  it('runs two costly queries one after the other and lets a cheap one pass meanwhile', async () => {
    const { gate, app } = gated(5000);
    unlock = await lockInvoices();
    const done: string[] = [];
    const first = send(app, HEAVY).then((response) => {
      done.push('first');
      return response;
    });
    await until(() => gate.costInFlight > 0, 'the first query executes');
    const second = send(app, HEAVY).then((response) => {
      done.push('second');
      return response;
    });
    await until(() => gate.waiting === 1, 'the second query waits');
    const inFlight = gate.costInFlight;
    expect(inFlight).toBeGreaterThan(FREE_QUERY_COST);

    // A cheap query does not wait behind the costly ones.
    const cheap = await send(app, CHEAP);
    expect(cheap.status).toBe(200);
    expect(cheap.body.errors).toBeUndefined();
    expect(done).toEqual([]);
    // The second has not started: only the first's cost is in flight.
    expect(gate.costInFlight).toBe(inFlight);
    expect(gate.waiting).toBe(1);

    await unlock();
    unlock = undefined;
    const answers = await Promise.all([first, second]);
    expect(answers.map((answer) => [answer.status, answer.body.errors])).toEqual([
      [200, undefined],
      [200, undefined],
    ]);
    expect(done).toEqual(['first', 'second']);
    expect([gate.costInFlight, gate.waiting]).toEqual([0, 0]);
  });

  it('answers SERVER_BUSY when a query cannot start before its deadline, and keeps no weight after', async () => {
    const { gate, app } = gated(400);
    unlock = await lockInvoices();
    const first = send(app, HEAVY);
    await until(() => gate.costInFlight > 0, 'the first query executes');
    const second = await send(app, HEAVY);

    expect(second.status).toBe(503);
    expect(second.headers.get('retry-after')).toBe('2');
    expect(second.body.errors[0].extensions).toMatchObject({ code: 'SERVER_BUSY', retryAfter: 2 });
    expect(second.body.data ?? null).toBeNull();
    // The first is past its deadline too, but its execution still waits on the lock: it keeps its weight.
    expect(gate.costInFlight).toBeGreaterThan(0);

    await unlock();
    unlock = undefined;
    expect((await first).body.errors[0].extensions.code).toBe('TIMEOUT');
    await until(() => gate.costInFlight === 0, 'the timed-out execution ends');
    expect(gate.waiting).toBe(0);
    const after = await send(app, HEAVY);
    expect([after.status, after.body.errors]).toEqual([200, undefined]);
    expect([gate.costInFlight, gate.waiting]).toEqual([0, 0]);
  });

  it('takes a waiting query whose client goes away out of the queue', async () => {
    const { gate, app } = gated(5000);
    unlock = await lockInvoices();
    const first = send(app, HEAVY);
    await until(() => gate.costInFlight > 0, 'the first query executes');
    const client = new AbortController();
    const second = send(app, HEAVY, client.signal).catch((error: unknown) => error);
    await until(() => gate.waiting === 1, 'the second query waits');

    client.abort();
    await until(() => gate.waiting === 0, 'the aborted query leaves the queue');
    await second;
    await unlock();
    unlock = undefined;
    expect((await first).status).toBe(200);
    expect([gate.costInFlight, gate.waiting]).toEqual([0, 0]);
  });

  it('lets costly operations run side by side while their costs fit, the next in order after', async () => {
    const cost = FREE_QUERY_COST + 1;
    const endsAt = Date.now() + 1000;
    const gate = new CostGate(2 * cost);
    const [a, b] = await Promise.all([gate.enter(cost, endsAt), gate.enter(cost, endsAt)]);
    const third = gate.enter(cost, endsAt);
    expect([gate.costInFlight, gate.waiting]).toEqual([2 * cost, 1]);
    // A cheap one passes regardless.
    expect(await gate.enter(FREE_QUERY_COST, endsAt)).toBeTypeOf('function');
    a?.();
    a?.(); // releasing twice gives back once
    (await third)?.();
    b?.();
    expect([gate.costInFlight, gate.waiting]).toEqual([0, 0]);
  });
});
