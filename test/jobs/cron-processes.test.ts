import type { ChildProcess } from 'node:child_process';
import { makeWorkerUtils } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BILLING_SCHEDULE_TASK } from '../../src/modules/billing/billing.jobs.ts';
import { WEBHOOK_SWEEP_TASK } from '../../src/modules/webhook/webhook.jobs.ts';
import { setupTestApp } from '../support/harness.ts';
import { startWorker } from '../support/server-process.ts';
import { until } from '../webhook/receiver.ts';

/**
 * Three real worker processes (`node src/worker.ts`, as `npm run worker` starts it) on one database,
 * running across at least two cron ticks. The queue's jobs table is watched by triggers that record
 * every job added and every job completed (graphile-worker deletes a job once it succeeds), so the
 * test reads from the database how many jobs each tick of each periodic task produced, and which
 * process ran them. Every tick must have produced exactly one job, completed once.
 */
const t = setupTestApp();

const WORKERS = 3;
/** The every-minute periodic tasks: the webhook sweep always, billing when scheduled so. */
const EVERY_MINUTE = [WEBHOOK_SWEEP_TASK, BILLING_SCHEDULE_TASK];
const TICKS = 2;

/** Starts `node src/worker.ts` over the test database, ticking billing every minute. */
const startWorkerProcess = () =>
  startWorker({ DATABASE_URL: t.databaseUrl, BILLING_RUN_SCHEDULE: '* * * * *', JOB_CONCURRENCY: '2' });

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/** Stops a worker (SIGTERM, then SIGKILL if it lingers) and resolves once it has exited. */
async function stopWorkerProcess(child: ChildProcess): Promise<void> {
  if (!running(child)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

type CronJob = {
  task: string;
  tick: string;
  added: number;
  completed: number;
  ranBy: string[];
};

describe('cron ticks with three worker processes on one database', () => {
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    // The queue's schema, as the first worker would create it, so the triggers can be attached first.
    const utils = await makeWorkerUtils({ connectionString: t.databaseUrl });
    await utils.migrate();
    await utils.release();
    await t.sql(`
      create table cron_probe (
        job_id bigint primary key,
        task text not null,
        tick timestamptz,
        added_at timestamptz not null default clock_timestamp(),
        completed_at timestamptz,
        completed_by text
      );
      create function cron_probe_added() returns trigger language plpgsql as $$
      begin
        insert into cron_probe (job_id, task, tick)
        select new.id, tasks.identifier, (new.payload->'_cron'->>'ts')::timestamptz
        from graphile_worker._private_tasks tasks where tasks.id = new.task_id;
        return null;
      end $$;
      create function cron_probe_completed() returns trigger language plpgsql as $$
      begin
        update cron_probe set completed_at = clock_timestamp(), completed_by = old.locked_by
        where job_id = old.id;
        return null;
      end $$;
      create trigger cron_probe_added after insert on graphile_worker._private_jobs
        for each row execute function cron_probe_added();
      create trigger cron_probe_completed after delete on graphile_worker._private_jobs
        for each row execute function cron_probe_completed();
    `);
  });

  afterAll(async () => {
    // Every child is stopped, whatever the test's outcome; one that ignores SIGTERM is killed.
    await Promise.all(children.map((child) => stopWorkerProcess(child)));
  });

  const cronJobs = async (since: Date) =>
    t.sql<CronJob>(
      `select task, to_char(tick at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') as tick,
              count(*)::int as added, count(completed_at)::int as completed,
              array_agg(completed_by order by job_id) filter (where completed_by is not null) as "ranBy"
       from cron_probe
       where tick is not null and tick > $1 and task = any($2)
       group by task, tick order by tick, task`,
      [since, EVERY_MINUTE],
    );

  it('runs each tick of each periodic task once, in one of the processes', { timeout: 170_000 }, async () => {
    // given three worker processes on one database, all running
    const started = await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        const worker = await startWorkerProcess();
        children.push(worker.process);
        return worker;
      }),
    );
    const allRunning = new Date();

    // when two minute boundaries pass with all three running
    const ticks = async () => new Set((await cronJobs(allRunning)).map((job) => job.tick));
    await until(async () => (await ticks()).size >= TICKS, 130_000, `${TICKS} cron ticks`);
    // (every job of those ticks finished, and any duplicate a late process might add had its chance)
    await until(
      async () => (await cronJobs(allRunning)).every((job) => job.completed === job.added),
      20_000,
      'the ticks’ jobs completed',
    );
    await new Promise((resolve) => setTimeout(resolve, 3000));

    // then each tick of each every-minute task added exactly one job, which ran once, in one process
    const jobs = await cronJobs(allRunning);
    expect(new Set(jobs.map((job) => job.tick)).size).toBeGreaterThanOrEqual(TICKS);
    for (const tick of new Set(jobs.map((job) => job.tick))) {
      expect(jobs.filter((job) => job.tick === tick).map((job) => job.task)).toEqual(
        [...EVERY_MINUTE].sort(),
      );
    }
    for (const job of jobs) {
      expect(job, `${job.task} at ${job.tick}`).toMatchObject({ added: 1, completed: 1 });
      expect(job.ranBy).toHaveLength(1);
    }
    // and the three processes were all up throughout, each with its own worker
    for (const worker of started) {
      expect(running(worker.process)).toBe(true);
      expect(worker.output()).not.toMatch(/uncaught|unhandled|"level":50/i);
    }
    const known = await t.sql<{ identifier: string }>(
      'select identifier from graphile_worker._private_known_crontabs where identifier = any($1)',
      [EVERY_MINUTE],
    );
    expect(known.map((row) => row.identifier).sort()).toEqual([...EVERY_MINUTE].sort());
  });
});
