import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { IDEMPOTENCY_PURGE_TASK } from '../idempotency/idempotency.jobs.ts';
import type { Logger } from '../logger.ts';
import { BILLING_SCHEDULE_TASK } from '../modules/billing/billing.jobs.ts';
import { INVOICE_REMINDERS_TASK } from '../modules/email/email.jobs.ts';
import { EVENT_PURGE_TASK } from '../modules/event/event.jobs.ts';
import { INVOICE_OVERDUE_TASK } from '../modules/invoice/invoice-overdue.jobs.ts';
import { LEDGER_RECOGNITION_TASK } from '../modules/ledger/ledger-recognition.jobs.ts';
import { USAGE_PARTITIONS_TASK } from '../modules/metering/metering.jobs.ts';
import { jobTasks } from '../modules/registry.ts';
import { type CronTask, type JobRunner, startJobRunner } from './runner.ts';

/**
 * The worker of `npm start` and `npm run worker`: every module's tasks, the periodic ones on their
 * schedules, and a billing tick at start (a job already waiting for it is not doubled).
 */
export async function startWorker(
  config: Pick<
    Config,
    'BILLING_RUN_SCHEDULE' | 'JOB_CONCURRENCY' | 'EVENT_RETENTION_DAYS' | 'SMTP_URL' | 'MAIL_FROM'
  >,
  { orm, ownerUrl, logger }: { orm: MikroORM; ownerUrl: string; logger: Logger },
): Promise<JobRunner> {
  const cron: CronTask[] = [
    { task: IDEMPOTENCY_PURGE_TASK, schedule: '17 * * * *' },
    { task: EVENT_PURGE_TASK, schedule: '23 3 * * *' },
    { task: INVOICE_OVERDUE_TASK, schedule: '5 * * * *' },
    { task: INVOICE_REMINDERS_TASK, schedule: '35 * * * *' },
    { task: LEDGER_RECOGNITION_TASK, schedule: '41 0 * * *' },
    { task: USAGE_PARTITIONS_TASK, schedule: '11 1 * * *' },
  ];
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
        mail: config.SMTP_URL ? { smtpUrl: config.SMTP_URL, from: config.MAIL_FROM } : null,
      },
    }),
    cron,
    logger,
  });
  if (billing) await runner.addJob(BILLING_SCHEDULE_TASK, {}, { jobKey: `${BILLING_SCHEDULE_TASK}:start` });
  return runner;
}
