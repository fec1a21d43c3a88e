import { makeWorkerUtils, type Task } from 'graphile-worker';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobRunner, startJobRunner } from '../../src/jobs/runner.ts';
import { setupTestApp } from '../support/harness.ts';

const t = setupTestApp();
const logger = pino({ level: 'silent' });

const until = async (check: () => Promise<boolean>, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

/** A task that records each run of it in job_probe, so the test reads what ran from the database. */
const recording =
  (name: string, { failFirst = false } = {}): Task =>
  async (payload, helpers) => {
    if (failFirst && helpers.job.attempts === 1) throw new Error('the first attempt fails');
    const cron = (payload as { _cron?: { ts: string } })._cron;
    await helpers.query('insert into job_probe (task, tick, attempts) values ($1, $2, $3)', [
      name,
      cron?.ts ?? null,
      helpers.job.attempts,
    ]);
  };

describe('the job queue', () => {
  const runners: JobRunner[] = [];

  beforeAll(async () => {
    await t.sql('create table job_probe (task text not null, tick text, attempts int not null)');
  });

  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.stop()));
  });

  const start = async (tasks: Record<string, Task>, cron: { task: string; schedule: string }[] = []) => {
    const runner = await startJobRunner({
      connectionString: t.databaseUrl,
      concurrency: 1,
      tasks,
      cron,
      logger,
    });
    runners.push(runner);
    return runner;
  };
  const runs = (task: string) =>
    t.sql<{ tick: string | null; attempts: number }>('select tick, attempts from job_probe where task = $1', [
      task,
    ]);

  it('keeps a job added while no worker runs, and runs it once a worker starts', async () => {
    // given a job added to the queue with no worker running
    const utils = await makeWorkerUtils({ connectionString: t.databaseUrl, logger: undefined });
    await utils.migrate();
    await utils.addJob('stored', { n: 1 });
    await utils.release();
    expect(await runs('stored')).toEqual([]);

    // when a worker starts
    await start({ stored: recording('stored') });

    // then the job runs, once
    await until(async () => (await runs('stored')).length > 0, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await runs('stored')).toHaveLength(1);
  });

  it('retries a failed job', async () => {
    const runner = await start({ flaky: recording('flaky', { failFirst: true }) });
    await runner.addJob('flaky', {});
    // the first retry waits e^1 seconds
    await until(async () => (await runs('flaky')).length > 0, 20_000);
    expect(await runs('flaky')).toEqual([{ tick: null, attempts: 2 }]);
  });

  it('runs each cron tick once, however many workers share the database', { timeout: 120_000 }, async () => {
    // given three workers (each with its own pool, as three processes would be) on an every-minute schedule
    for (let i = 0; i < 3; i++)
      await start({ tick: recording('tick') }, [{ task: 'tick', schedule: '* * * * *' }]);

    // when a minute boundary passes
    await until(async () => (await runs('tick')).length > 0, 70_000);
    await new Promise((resolve) => setTimeout(resolve, 3000));

    // then the tick ran exactly once
    const ticks = await runs('tick');
    expect(ticks).toHaveLength(1);
    expect(ticks[0]?.tick).toEqual(expect.any(String));
  });
});
