import type { MikroORM } from '@mikro-orm/postgresql';
import { parseCronItems, type Runner, run, type TaskList, Logger as WorkerLogger } from 'graphile-worker';
import pg from 'pg';
import type { Logger } from '../logger.ts';

/** Where invoice e-mail goes out: SMTP_URL and MAIL_FROM. */
export type MailSettings = { smtpUrl: string; from: string };

/** How webhooks are delivered (WEBHOOK_* settings), in milliseconds. */
export type WebhookSettings = {
  allowPrivateTargets: boolean;
  timeoutMs: number;
  retryBaseMs: number;
  retryPeriodMs: number;
};

/** The defaults of the WEBHOOK_* settings. */
export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  allowPrivateTargets: false,
  timeoutMs: 10_000,
  retryBaseMs: 10_000,
  retryPeriodMs: 72 * 3600_000,
};

/**
 * What tasks may be configured with; `mail` is null when the server sends no e-mail, `webhooks` absent
 * means DEFAULT_WEBHOOK_SETTINGS.
 */
export type JobSettings = {
  eventRetentionDays: number;
  /** Batches a scheduled billing run bills at once (BILLING_CONCURRENCY). */
  billingConcurrency?: number;
  /** Helpers a scheduled billing run asks for (BILLING_HELPERS). */
  billingHelpers?: number;
  mail: MailSettings | null;
  webhooks?: WebhookSettings;
};

/**
 * A module's interest in events: `task` gets a job `{ eventId, environmentId, type }` for each event
 * of `types` once that event's transaction commits. With `wants`, only when `wants` answers true for
 * the event's environment and type (asked when the event is handed out, once per environment and type
 * of a batch of events): a cheap look whether the task would have anything to do, so that an event
 * nobody listens to costs no job. It must answer true whenever the task, run at that moment on an
 * event of that environment and type, would do anything.
 */
export type EventListener = {
  task: string;
  types: readonly string[] | 'all';
  wants?: (scope: EventScope, orm: MikroORM) => Promise<boolean>;
  /**
   * `wants` for all the environments and types of a batch at once: one read as the database owner, on
   * the event relay's own connection and in its transaction (`query`), answering in the order of
   * `scopes`. It must answer exactly as `wants` would for each scope (which is still used where no
   * owner connection is at hand).
   */
  wantsAll?: (scopes: readonly EventScope[], query: OwnerQuery) => Promise<boolean[]>;
};

/** A read as the database owner (no row-level security): the rows of `sql` with `params` ($1, $2, …). */
export type OwnerQuery = <R = Record<string, unknown>>(sql: string, params: unknown[]) => Promise<R[]>;

/** Which events a listener's `wants` is asked about: those of one type in one environment. */
export type EventScope = Pick<PublishedEvent, 'environmentId' | 'type'>;

/** What an event listener's job carries. */
export type PublishedEvent = { eventId: string; environmentId: string; type: string };

/**
 * What a task needs besides its payload: the application's ORM, the logger, the settings, and every
 * module's event listeners.
 */
export type JobDependencies = {
  orm: MikroORM;
  logger: Logger;
  settings: JobSettings;
  eventListeners: readonly EventListener[];
};

/** A periodic task: graphile-worker adds one job per tick of `schedule` (crontab), once for all processes. */
export type CronTask = { task: string; schedule: string };

export type JobRunnerOptions = {
  /** The database owner's URL: the queue keeps its tables in the `graphile_worker` schema. */
  connectionString: string;
  concurrency: number;
  tasks: TaskList;
  cron: readonly CronTask[];
  logger: Logger;
};

/**
 * The job queue on PostgreSQL (graphile-worker). Jobs live in the database, so they survive restarts
 * and every process running a worker shares them; a cron tick is taken by one process only (the
 * queue records each tick it scheduled). Its schema is migrated by graphile-worker itself, apart
 * from the application's migrations.
 */
export async function startJobRunner({
  connectionString,
  concurrency,
  tasks,
  cron,
  logger,
}: JobRunnerOptions): Promise<JobRunner> {
  // The queue's own pool, ended when the runner stops: an idle connection left behind would turn the
  // database's shutdown into an unhandled error.
  const pool = new pg.Pool({ connectionString, max: concurrency + 2 });
  pool.on('error', (error) => logger.warn({ err: error }, 'a job queue connection failed'));
  const runner = await run({
    pgPool: pool,
    concurrency,
    noHandleSignals: true,
    taskList: tasks,
    parsedCronItems: parseCronItems(
      cron.map(({ task, schedule }) => ({
        task,
        match: schedule,
        identifier: task,
        // A tick missed while no worker ran is not made up: the next tick does the same work.
        options: { backfillPeriod: 0, maxAttempts: 1 },
      })),
    ),
    logger: workerLogger(logger),
  }).catch(async (error) => {
    await pool.end();
    throw error;
  });
  return {
    addJob: runner.addJob,
    promise: runner.promise,
    stop: async () => {
      try {
        await runner.stop();
      } finally {
        await pool.end();
      }
    },
  };
}

/** A started runner: add jobs, stop it (running jobs finish first) and its pool. */
export type JobRunner = Pick<Runner, 'addJob' | 'promise' | 'stop'>;

/** graphile-worker's log lines through the application's logger; its chatty info goes to debug. */
function workerLogger(logger: Logger): WorkerLogger {
  return new WorkerLogger((scope) => (level, message, meta) => {
    const fields = { ...scope, ...meta };
    if (level === 'error') logger.error(fields, message);
    else if (level === 'warning') logger.warn(fields, message);
    else logger.debug(fields, message);
  });
}
