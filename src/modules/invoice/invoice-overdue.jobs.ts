import type { EntityManager } from '@mikro-orm/postgresql';
import type { Task } from 'graphile-worker';
import { AccessService } from '../../auth/access.service.ts';
import { createJobContext } from '../../context.ts';
import { today } from '../../dates/calendar.ts';
import { inEnvironment } from '../../db/tenant-transaction.ts';
import type { JobDependencies } from '../../jobs/runner.ts';
import { CustomerSchema } from '../customer/customer.entity.ts';
import { InvoiceSchema } from './invoice.entity.ts';
import { recordInvoiceEvent } from './invoice.events.ts';
import { overdueWhere } from './invoice-overdue.where.ts';

export const INVOICE_OVERDUE_TASK = 'invoice-overdue';

/** Invoices told of in one transaction; the rest wait for the next batch of the same run. */
export const OVERDUE_BATCH = 200;

/**
 * Marks up to OVERDUE_BATCH invoices overdue on `today` (and not told of yet) and writes their
 * `invoice.overdue` events: those of the customers of test clock `clockId`, or, with null, those of
 * customers on no clock (a clock's customers become overdue on its time, when it advances). Answers
 * how many it marked.
 */
export async function markOverdue(
  tx: EntityManager,
  environmentId: string,
  today: string,
  clockId: string | null,
): Promise<number> {
  const clocked = await tx.find(
    CustomerSchema,
    { environmentId, testClockId: clockId ?? { $ne: null } },
    { fields: ['id'] },
  );
  if (clockId && clocked.length === 0) return 0;
  const customers = clocked.map((customer) => customer.id);
  const invoices = await tx.find(
    InvoiceSchema,
    {
      $and: [
        { environmentId, overdueEventAt: null },
        overdueWhere(today),
        ...(clockId ? [{ customerId: { $in: customers } }] : []),
        ...(!clockId && customers.length > 0 ? [{ customerId: { $nin: customers } }] : []),
      ],
    },
    { orderBy: { id: 'asc' }, limit: OVERDUE_BATCH },
  );
  const now = new Date();
  for (const invoice of invoices) {
    invoice.overdueEventAt = now;
    await recordInvoiceEvent(tx, 'invoice.overdue', invoice);
  }
  await tx.flush();
  return invoices.length;
}

/**
 * Writes `invoice.overdue` once for each invoice that has become overdue (booked, not void or
 * uncollectible, something due, its due date before today, UTC), environment by environment; a
 * test clock's customers are left to their clock. The
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
          const batch = await inEnvironment(ctx.em, environmentId, (tx) =>
            markOverdue(tx, environmentId, today(), null),
          );
          told += batch;
          if (batch < OVERDUE_BATCH) break;
        }
        if (told > 0) logger.info({ environmentId, count: told }, 'invoices became overdue');
      }
    },
  };
}
