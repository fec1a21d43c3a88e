import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { IDEMPOTENCY_PURGE_TASK } from '../idempotency/idempotency.jobs.ts';
import type { Logger } from '../logger.ts';
import { BILLING_SCHEDULE_TASK } from '../modules/billing/billing.jobs.ts';
import { INVOICE_REMINDERS_TASK } from '../modules/email/email.jobs.ts';
import { EVENT_PURGE_TASK } from '../modules/event/event.jobs.ts';
import { EventRelay } from '../modules/event/event.relay.ts';
import { INVOICE_OVERDUE_TASK } from '../modules/invoice/invoice-overdue.jobs.ts';
import { LEDGER_RECOGNITION_TASK } from '../modules/ledger/ledger-recognition.jobs.ts';
import { USAGE_PARTITIONS_TASK } from '../modules/metering/metering.jobs.ts';
import { eventListeners, jobTasks } from '../modules/registry.ts';
import { staleAfterMs } from '../modules/webhook/webhook.dispatcher.ts';
import { WEBHOOK_SWEEP_TASK } from '../modules/webhook/webhook.jobs.ts';
import {
  type CronTask,
  DEFAULT_WEBHOOK_SETTINGS,
  type JobRunner,
  startJobRunner,
  type WebhookSettings,
} from './runner.ts';

/** The WEBHOOK_* settings of `config`, each left out taking its default. */
export function webhookSettings(
  config: Partial<
    Pick<
      Config,
      'WEBHOOK_ALLOW_PRIVATE_TARGETS' | 'WEBHOOK_TIMEOUT_MS' | 'WEBHOOK_RETRY_BASE_MS' | 'WEBHOOK_RETRY_HOURS'
    >
  >,
): WebhookSettings {
  return {
    allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? DEFAULT_WEBHOOK_SETTINGS.allowPrivateTargets,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS ?? DEFAULT_WEBHOOK_SETTINGS.timeoutMs,
    retryBaseMs: config.WEBHOOK_RETRY_BASE_MS ?? DEFAULT_WEBHOOK_SETTINGS.retryBaseMs,
    retryPeriodMs:
      config.WEBHOOK_RETRY_HOURS === undefined
        ? DEFAULT_WEBHOOK_SETTINGS.retryPeriodMs
        : Math.round(config.WEBHOOK_RETRY_HOURS * 3600_000),
  };
}

/**
 * The database connections the job worker may hold at once: one a job, and a billing job (a run's lead
 * or helper) its lock's besides its BILLING_CONCURRENCY batches'; one more for the queue's own work. A
 * pool smaller than that can leave a run's lead waiting for its helper's lock on a connection the
 * helper needs for its batch.
 */
export function workerConnections(
  config: Pick<Config, 'JOB_CONCURRENCY'> & Partial<Pick<Config, 'BILLING_CONCURRENCY'>>,
): number {
  return config.JOB_CONCURRENCY * ((config.BILLING_CONCURRENCY ?? 1) + 1) + 1;
}

/**
 * The worker of `npm start` and `npm run worker`: every module's tasks, the periodic ones on their
 * schedules, the event relay (each committed event's outbox row to the jobs of the listeners that want
 * it; stopped with the worker), a billing tick at start (a job already waiting for it is not doubled),
 * and a webhook sweep soon after start (for deliveries a killed process left behind). Settings of
 * WEBHOOK_* left out take their defaults.
 */
export async function startWorker(
  config: Pick<
    Config,
    'BILLING_RUN_SCHEDULE' | 'JOB_CONCURRENCY' | 'EVENT_RETENTION_DAYS' | 'SMTP_URL' | 'MAIL_FROM'
  > &
    Partial<Pick<Config, 'BILLING_CONCURRENCY' | 'BILLING_HELPERS'>> &
    Parameters<typeof webhookSettings>[0],
  { orm, ownerUrl, logger }: { orm: MikroORM; ownerUrl: string; logger: Logger },
): Promise<JobRunner> {
  const cron: CronTask[] = [
    { task: IDEMPOTENCY_PURGE_TASK, schedule: '17 * * * *' },
    { task: EVENT_PURGE_TASK, schedule: '23 3 * * *' },
    { task: INVOICE_OVERDUE_TASK, schedule: '5 * * * *' },
    { task: INVOICE_REMINDERS_TASK, schedule: '35 * * * *' },
    { task: LEDGER_RECOGNITION_TASK, schedule: '41 0 * * *' },
    { task: WEBHOOK_SWEEP_TASK, schedule: '* * * * *' },
    { task: USAGE_PARTITIONS_TASK, schedule: '11 1 * * *' },
  ];
  const webhooks = webhookSettings(config);
  const billing = config.BILLING_RUN_SCHEDULE !== 'off';
  if (billing) cron.push({ task: BILLING_SCHEDULE_TASK, schedule: config.BILLING_RUN_SCHEDULE });
  const runner = await startJobRunner({
    connectionString: ownerUrl,
    concurrency: config.JOB_CONCURRENCY,
    tasks: jobTasks({
      orm,
      logger,
      settings: {
        eventRetentionDays: config.EVENT_RETENTION_DAYS,
        billingConcurrency: config.BILLING_CONCURRENCY,
        billingHelpers: config.BILLING_HELPERS,
        mail: config.SMTP_URL ? { smtpUrl: config.SMTP_URL, from: config.MAIL_FROM } : null,
        webhooks,
      },
    }),
    cron,
    logger,
  });
  if (billing) await runner.addJob(BILLING_SCHEDULE_TASK, {}, { jobKey: `${BILLING_SCHEDULE_TASK}:start` });
  // Attempts cut off by a crash look abandoned only once they are older than an attempt can take.
  await runner.addJob(
    WEBHOOK_SWEEP_TASK,
    {},
    { jobKey: `${WEBHOOK_SWEEP_TASK}:start`, runAt: new Date(Date.now() + staleAfterMs(webhooks) + 1000) },
  );
  const relay = new EventRelay({ connectionString: ownerUrl, orm, listeners: eventListeners, logger });
  try {
    await relay.start();
  } catch (error) {
    await runner.stop();
    throw error;
  }
  return {
    ...runner,
    stop: async () => {
      try {
        await relay.stop();
      } finally {
        await runner.stop();
      }
    },
  };
}
