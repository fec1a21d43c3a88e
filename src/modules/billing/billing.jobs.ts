import type { JobHelpers, Task } from 'graphile-worker';
import { AccessService } from '../../auth/access.service.ts';
import { createJobContext } from '../../context.ts';
import { DomainError } from '../../errors.ts';
import type { JobDependencies } from '../../jobs/runner.ts';
import { BillingRunService } from './billing-run.service.ts';

/** The periodic task: one `billing-run` job per environment. */
export const BILLING_SCHEDULE_TASK = 'billing-schedule';
export const BILLING_RUN_TASK = 'billing-run';
export const BILLING_HELP_TASK = 'billing-run-help';

type BillingRunPayload = { environmentId: string };
type BillingHelpPayload = { environmentId: string; runId: string };

/** Adds `count` `billing-run-help` jobs for run `runId`, which any process's worker may take (BillingRunService.help). */
export async function inviteHelpers(
  jobs: Pick<JobHelpers, 'addJob'>,
  environmentId: string,
  runId: string,
  count: number,
): Promise<void> {
  for (let helper = 1; helper <= count; helper++) {
    await jobs.addJob(BILLING_HELP_TASK, { environmentId, runId } satisfies BillingHelpPayload, {
      jobKey: `${BILLING_HELP_TASK}:${runId}:${helper}`,
      // A helper that failed left its batch to the next run: the run has moved on without it.
      maxAttempts: 1,
    });
  }
}

/**
 * The server's periodic billing as jobs. Each tick adds one `billing-run` job per environment (a job
 * already waiting for an environment is kept, not doubled); each job bills that environment as of
 * the moment it runs, and asks for BILLING_HELPERS `billing-run-help` jobs, which the workers of any
 * process take to bill the run's customers beside it. Billing is exactly-once whatever retries happen,
 * and an environment whose run is under way elsewhere is left to that run.
 */
export function billingTasks({ orm, logger, settings }: JobDependencies): Record<string, Task> {
  const helpersPerRun = settings.billingHelpers ?? 0;
  return {
    [BILLING_SCHEDULE_TASK]: async (_payload, jobs) => {
      // The application role reads environments without one chosen; tenant rows only inside each run.
      const environments = await new AccessService(orm.em.fork()).listEnvironments();
      for (const { id: environmentId } of environments) {
        await jobs.addJob(BILLING_RUN_TASK, { environmentId } satisfies BillingRunPayload, {
          jobKey: `${BILLING_RUN_TASK}:${environmentId}`,
          jobKeyMode: 'preserve_run_at',
          maxAttempts: 5,
        });
      }
    },
    [BILLING_RUN_TASK]: async (payload, jobs) => {
      const { environmentId } = payload as BillingRunPayload;
      const ctx = createJobContext(orm.em.fork(), environmentId, 'billingRun');
      const scheduledAt = new Date();
      try {
        const run = await new BillingRunService(ctx).run(scheduledAt, {
          triggeredBy: 'schedule',
          signal: jobs.abortSignal,
          concurrency: settings.billingConcurrency,
          invite: (runId) => inviteHelpers(jobs, environmentId, runId, helpersPerRun),
          onProgress: ({ runId, customersDone }) =>
            logger.debug({ environmentId, runId, customersDone }, 'billing run progress'),
        });
        const { id, status, invoiceCount, periodCount, renewalCount, endedCount, errors } = run;
        const summary = {
          environmentId,
          runId: id,
          status,
          invoiceCount,
          periodCount,
          renewalCount,
          endedCount,
          customersHandedOut: run.customersHandedOut,
          customersDone: run.customersDone,
        };
        if (errors.length > 0)
          logger.warn({ ...summary, errors }, 'billing run could not bill some customers');
        else if (status === 'interrupted')
          logger.warn(summary, 'billing run interrupted: the next run bills the customers it did not');
        else if (periodCount + renewalCount + endedCount > 0) logger.info(summary, 'billing run finished');
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'CONFLICT')) throw error;
        // Not silently: an environment whose runs keep being skipped is one to look at.
        logger.warn({ environmentId }, 'billing run skipped: another run of the environment is under way');
        await new BillingRunService(
          createJobContext(orm.em.fork(), environmentId, 'billingRun'),
        ).recordSkipped(scheduledAt, 'schedule');
      }
    },
    [BILLING_HELP_TASK]: async (payload, jobs) => {
      const { environmentId, runId } = payload as BillingHelpPayload;
      const ctx = createJobContext(orm.em.fork(), environmentId, 'billingRun');
      const customersDone = await new BillingRunService(ctx).help(runId, {
        signal: jobs.abortSignal,
        concurrency: settings.billingConcurrency,
        onProgress: ({ customersDone }) =>
          logger.debug({ environmentId, runId, customersDone }, 'billing run help progress'),
      });
      if (customersDone === null)
        logger.info({ environmentId, runId }, 'billing run help: the run had ended');
      else logger.info({ environmentId, runId, customersDone }, 'billing run help finished');
    },
  };
}
