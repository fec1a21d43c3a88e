import type { EntityManager } from '@mikro-orm/postgresql';
import type { Task } from 'graphile-worker';
import type { JobDependencies } from '../../jobs/runner.ts';

export const USAGE_PARTITIONS_TASK = 'usage-event-partitions';

/** Months of usage-event partitions kept ready ahead of the current one. */
export const PARTITION_MONTHS_AHEAD = 3;

/**
 * Makes the partitions of `usage_event` for this month and the next PARTITION_MONTHS_AHEAD ones (UTC),
 * so ingestion rarely has to make one itself. Answers the partitions' names.
 */
export async function createPartitionsAhead(em: EntityManager, now: Date = new Date()): Promise<string[]> {
  const rows = await em.getConnection().execute<{ name: string }[]>(
    `select usage_event_partition((date_trunc('month', ?::timestamptz at time zone 'UTC') + make_interval(months => m))::date) as name
     from generate_series(0, ?::int) as m`,
    [now, PARTITION_MONTHS_AHEAD],
  );
  return rows.map((row) => row.name);
}

/** The daily job that keeps partitions ahead of time. */
export function meteringTasks({ orm, logger }: JobDependencies): Record<string, Task> {
  return {
    [USAGE_PARTITIONS_TASK]: async () => {
      const partitions = await createPartitionsAhead(orm.em.fork());
      logger.debug({ partitions }, 'usage event partitions ready');
    },
  };
}
