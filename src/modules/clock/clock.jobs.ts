import { LockMode } from '@mikro-orm/core';
import type { Task } from 'graphile-worker';
import { createJobContext } from '../../context.ts';
import { dateOf } from '../../dates/calendar.ts';
import { inEnvironment } from '../../db/tenant-transaction.ts';
import type { JobDependencies } from '../../jobs/runner.ts';
import { BillingRunService } from '../billing/billing-run.service.ts';
import { markOverdue, OVERDUE_BATCH } from '../invoice/invoice-overdue.jobs.ts';
import { TestClockSchema } from './clock.entity.ts';
import { CLOCK_ADVANCE_TASK, type ClockAdvancePayload, recordClockEvent } from './clock.service.ts';

/**
 * The advance of a test clock: bills the clock's customers, and no one else, up to where the clock is
 * advancing to (renewals, ends, proration lines, usage periods: a billing run restricted to them, as
 * of that moment), tells of their invoices that became overdue by then, and only then sets the frozen
 * time and makes the clock `ready`. A retry, or a second job for the same advance, bills nothing twice:
 * billing is exactly-once per item period, and a clock already ready is left alone. While another run
 * of the environment holds its billing lock the job fails and the queue retries it.
 */
export function clockTasks({ orm, logger }: JobDependencies): Record<string, Task> {
  return {
    [CLOCK_ADVANCE_TASK]: async (payload) => {
      const { environmentId, clockId } = payload as ClockAdvancePayload;
      const ctx = createJobContext(orm.em.fork(), environmentId, 'testClockAdvance');
      const clock = await inEnvironment(ctx.em, environmentId, (tx) =>
        tx.findOne(TestClockSchema, { id: clockId, environmentId }),
      );
      if (clock?.status !== 'advancing' || !clock.advancingTo) return;
      const to = clock.advancingTo;
      const run = await new BillingRunService(ctx).run(to, {
        triggeredBy: 'test_clock',
        testClockId: clockId,
        onProgress: ({ runId, customersDone }) =>
          logger.debug({ environmentId, clockId, runId, customersDone }, 'test clock advance progress'),
      });
      await inEnvironment(ctx.em, environmentId, async (tx) => {
        let overdue = 0;
        for (;;) {
          const marked = await markOverdue(tx, environmentId, dateOf(to), clockId);
          overdue += marked;
          if (marked < OVERDUE_BATCH) break;
        }
        const locked = await tx.findOne(
          TestClockSchema,
          { id: clockId, environmentId },
          { lockMode: LockMode.PESSIMISTIC_WRITE },
        );
        if (locked?.status !== 'advancing' || locked.advancingTo?.getTime() !== to.getTime()) return;
        locked.frozenTime = to;
        locked.status = 'ready';
        locked.advancingTo = null;
        locked.updatedAt = new Date();
        recordClockEvent(tx, 'test_clock.ready', locked, {
          billingRunId: run.id,
          billingRunStatus: run.status,
          invoiceCount: run.invoiceCount,
          overdueCount: overdue,
        });
        await tx.flush();
      });
      logger.info(
        { environmentId, clockId, runId: run.id, frozenTime: to.toISOString() },
        'test clock advanced',
      );
    },
  };
}
