import type { Task } from 'graphile-worker';
import type { JobDependencies } from '../../jobs/runner.ts';
import { purgeExpiredEvents } from './event.service.ts';

export const EVENT_PURGE_TASK = 'event-purge';

/** Deletes events past their retention: a periodic task, idempotent itself. */
export function eventTasks({ orm, logger, settings }: JobDependencies): Record<string, Task> {
  return {
    [EVENT_PURGE_TASK]: async () => {
      const count = await purgeExpiredEvents(orm.em.fork(), settings.eventRetentionDays);
      if (count > 0) logger.info({ count }, 'purged expired events');
    },
  };
}
