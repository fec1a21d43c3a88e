import type { Task } from 'graphile-worker';
import type { JobDependencies, PublishedEvent } from '../../jobs/runner.ts';
import { purgeExpiredEvents } from './event.service.ts';

export const EVENT_PURGE_TASK = 'event-purge';

/** Added by a trigger for every event, in the event's transaction (Migration20261124000000JobQueue). */
export const EVENT_PUBLISHED_TASK = 'event-published';

/**
 * Deletes events past their retention (a periodic task, idempotent itself), and hands each event to
 * the listeners of its type that want it: one job each, added in one statement, so a listener that
 * fails is retried alone and never repeats another's work.
 */
export function eventTasks({ orm, logger, settings, eventListeners }: JobDependencies): Record<string, Task> {
  return {
    [EVENT_PURGE_TASK]: async () => {
      const count = await purgeExpiredEvents(orm.em.fork(), settings.eventRetentionDays);
      if (count > 0) logger.info({ count }, 'purged expired events');
    },
    [EVENT_PUBLISHED_TASK]: async (payload, helpers) => {
      const event = payload as PublishedEvent;
      const jobs = [];
      for (const { task, types, wants } of eventListeners) {
        if (types !== 'all' && !types.includes(event.type)) continue;
        // A listener with nothing to do for this event gets no job (a job costs several statements).
        if (wants && !(await wants(event, orm))) continue;
        jobs.push({ identifier: task, payload: event, jobKey: `${task}:${event.eventId}` });
      }
      if (jobs.length > 0) await helpers.addJobs(jobs);
    },
  };
}
