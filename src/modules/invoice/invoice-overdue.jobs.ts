import type { Task } from 'graphile-worker';
import { AccessService } from '../../auth/access.service.ts';
import { createJobContext } from '../../context.ts';
import { today } from '../../dates/calendar.ts';
import { inEnvironment } from '../../db/tenant-transaction.ts';
import type { JobDependencies } from '../../jobs/runner.ts';
import { InvoiceSchema } from './invoice.entity.ts';
import { recordInvoiceEvent } from './invoice.events.ts';
import { overdueWhere } from './invoice-overdue.where.ts';

export const INVOICE_OVERDUE_TASK = 'invoice-overdue';

/** Invoices told of in one transaction; the rest wait for the next batch of the same run. */
const BATCH = 200;

/**
 * Writes `invoice.overdue` once for each invoice that has become overdue (booked, not void or
 * uncollectible, something due, its due date before today, UTC), environment by environment. The
 * mark and the event commit together, so a run that stops half-way leaves the rest to the next.
 */
export function invoiceOverdueTasks({ orm, logger }: JobDependencies): Record<string, Task> {
  return {
    [INVOICE_OVERDUE_TASK]: async () => {
      const environments = await new AccessService(orm.em.fork()).listEnvironments();
      for (const { id: environmentId } of environments) {
        const ctx = createJobContext(orm.em.fork(), environmentId, 'invoiceOverdue');
        let told = 0;
        for (;;) {
          const batch = await inEnvironment(ctx.em, environmentId, async (tx) => {
            const invoices = await tx.find(
              InvoiceSchema,
              { $and: [{ environmentId, overdueEventAt: null }, overdueWhere(today())] },
              { orderBy: { id: 'asc' }, limit: BATCH },
            );
            const now = new Date();
            for (const invoice of invoices) {
              invoice.overdueEventAt = now;
              await recordInvoiceEvent(tx, 'invoice.overdue', invoice);
            }
            await tx.flush();
            return invoices.length;
          });
          told += batch;
          if (batch < BATCH) break;
        }
        if (told > 0) logger.info({ environmentId, count: told }, 'invoices became overdue');
      }
    },
  };
}
