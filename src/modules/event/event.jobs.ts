import type { Task } from 'graphile-worker';
import type { JobDependencies, PublishedEvent } from '../../jobs/runner.ts';
import { listenerJobs } from './event.relay.ts';
import { purgeExpiredEvents } from './event.service.ts';

export const EVENT_PURGE_TASK = 'event-purge';

/**
 * What the trigger of Migration20261124000000JobQueue added for every event until the outbox
 * (Migration20261126000000EventOutbox) replaced it: jobs a database still holds from before are
 * handed out as the relay hands out outbox rows.
 */
export const EVENT_PUBLISHED_TASK = 'event-published';

/**
 * Deletes events past their retention (a periodic task, idempotent itself), and hands an event queued
 * by the former trigger to the listeners of its type that want it: one job each, added in one
 * statement, so a listener that fails is retried alone and never repeats another's work. New events
 * go through the outbox and the relay (event.relay.ts).
 */
export function eventTasks({ orm, logger, settings, eventListeners }: JobDependencies): Record<string, Task> {
  return {
    [EVENT_PURGE_TASK]: async () => {
      const count = await purgeExpiredEvents(orm.em.fork(), settings.eventRetentionDays);
      if (count > 0) logger.info({ count }, 'purged expired events');
    },
    [EVENT_PUBLISHED_TASK]: async (payload, helpers) => {
      const jobs = await listenerJobs([payload as PublishedEvent], eventListeners, orm);
      if (jobs.length > 0) await helpers.addJobs(jobs);
    },
  };
}
