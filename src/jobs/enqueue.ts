import type { EntityManager } from '@mikro-orm/postgresql';

export type EnqueueOptions = {
  /** At most one waiting job per key: adding it again replaces the waiting one's payload and time. */
  jobKey?: string;
  runAt?: Date;
  maxAttempts?: number;
};

/**
 * Adds a job in the transaction `em` belongs to: it exists if and only if that transaction commits,
 * and a worker sees it only after the commit (see Migration20261124000000JobQueue).
 */
export async function enqueueJob(
  em: EntityManager,
  task: string,
  payload: object,
  options: EnqueueOptions = {},
): Promise<void> {
  await em.execute(
    'select enqueue_job(?, ?::json, ?, ?, ?)',
    [
      task,
      JSON.stringify(payload),
      options.jobKey ?? null,
      options.runAt ?? null,
      options.maxAttempts ?? null,
    ],
    'run',
  );
}
