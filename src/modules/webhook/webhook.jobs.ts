import type { Task } from 'graphile-worker';
import { DEFAULT_WEBHOOK_SETTINGS, type JobDependencies, type PublishedEvent } from '../../jobs/runner.ts';
import { WEBHOOK_FAN_OUT_TASK, WebhookDispatcher } from './webhook.dispatcher.ts';
import { WEBHOOK_DELIVERY_TASK, type WebhookDeliveryJob } from './webhook.service.ts';

/** Queues again what a process that died left undelivered (every minute, and soon after a worker starts). */
export const WEBHOOK_SWEEP_TASK = 'webhook-sweep';

/**
 * Webhooks: every event fans out to one delivery per endpoint that wants it, each delivery is one job
 * per attempt, and the sweep picks up what a killed process abandoned.
 */
export function webhookTasks({ orm, logger, settings }: JobDependencies): Record<string, Task> {
  const dispatcher = new WebhookDispatcher(orm, settings.webhooks ?? DEFAULT_WEBHOOK_SETTINGS, logger);
  return {
    [WEBHOOK_FAN_OUT_TASK]: async (payload) => {
      const { environmentId, eventId } = payload as PublishedEvent;
      await dispatcher.fanOut(environmentId, eventId);
    },
    [WEBHOOK_DELIVERY_TASK]: async (payload) => {
      const outcome = await dispatcher.attempt(payload as WebhookDeliveryJob);
      if (outcome && !outcome.ok)
        logger.debug({ ...(payload as object), error: outcome.error }, 'webhook attempt failed');
    },
    [WEBHOOK_SWEEP_TASK]: async () => {
      await dispatcher.sweep();
    },
  };
}
