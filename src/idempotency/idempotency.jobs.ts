import type { Task } from 'graphile-worker';
import type { JobDependencies } from '../jobs/runner.ts';
import { purgeExpiredIdempotencyKeys } from './idempotency.service.ts';

export const IDEMPOTENCY_PURGE_TASK = 'idempotency-purge';

/** Deletes expired Idempotency-Keys: a periodic task, idempotent itself. */
export function idempotencyTasks({ orm, logger }: JobDependencies): Record<string, Task> {
  return {
    [IDEMPOTENCY_PURGE_TASK]: async () => {
      const count = await purgeExpiredIdempotencyKeys(orm.em.fork());
      if (count > 0) logger.info({ count }, 'purged expired idempotency keys');
    },
  };
}
