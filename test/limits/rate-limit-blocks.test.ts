import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StatementRecorder } from '../../bench/statements.ts';
import { type App, createApp } from '../../src/app.ts';
import { type Orm, openOrm } from '../../src/db/orm.ts';
import { largestBlock, RECONCILE_MS } from '../../src/limits/rate-limit.ts';
import { entities } from '../../src/modules/registry.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

// Large enough for blocks of several requests (up to 10), small enough to spend quickly.
const rateLimit = { maxRequests: 160, windowSeconds: 3600 };
const t = setupTestApp({ rateLimit });

describe('rate limit admitted from reserved blocks, shared by two processes', () => {
  let env: TestEnvironment;
  let second: { orm: Orm; app: App };

  beforeAll(async () => {
    env = await t.createEnvironment('Blocks');
    // A second app on its own connection pool stands for a second server process.
    const orm = await openOrm(t.databaseUrl, { entities, poolMax: 4 });
    second = { orm, app: createApp({ orm, logger: pino({ level: 'silent' }), rateLimit }) };
  });

  afterAll(async () => {
    await second.orm.close();
  });

  const send = async (app: App) =>
    (
      await app.fetch('http://test/customers/0190a3f0-0000-7000-8000-000000000000', {
        headers: env.headers,
      })
    ).status;

  it('never admits more than the budget, refuses at most a block per other process early, and gives back what it held', async () => {
    // given 200 requests, 4 at a time on each of two processes
    const statuses: number[] = [];
    const recorder = new StatementRecorder();
    const sent = await recorder.during(async () => {
      for (let round = 0; round < 25; round++) {
        statuses.push(
          ...(await Promise.all([
            ...Array.from({ length: 4 }, () => send(t.app)),
            ...Array.from({ length: 4 }, () => send(second.app)),
          ])),
        );
      }
    });
    recorder.restore();

    // then no more than the budget went through, and no fewer than it less one block of the other process
    const admitted = statuses.filter((status) => status === 404).length;
    expect(statuses.filter((status) => status !== 404 && status !== 429)).toEqual([]);
    expect(admitted).toBeLessThanOrEqual(rateLimit.maxRequests);
    expect(admitted).toBeGreaterThanOrEqual(rateLimit.maxRequests - 2 * largestBlock(rateLimit.maxRequests));
    // and the admitted requests took far fewer reservations than one each
    const reservations = sent.filter((statement) => statement.includes('rate_limit_reserve')).length;
    expect(reservations).toBeLessThan(admitted / 2);

    // when the processes have reconciled (what they reserved and did not use goes back)
    await new Promise((resolve) => setTimeout(resolve, 2 * RECONCILE_MS + 300));
    let more = 0;
    while ((await send(t.app)) === 404) more++;

    // then the window admitted exactly its budget in all
    expect(admitted + more).toBe(rateLimit.maxRequests);
    const [counter] = await t.sql<{ request_count: number }>('select request_count from rate_limit_counter');
    expect(counter?.request_count).toBeGreaterThan(rateLimit.maxRequests);
  });
});
