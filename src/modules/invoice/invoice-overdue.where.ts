import { type FilterQuery, raw } from '@mikro-orm/core';
import type { Invoice } from './invoice.entity.ts';

/**
 * What is due, as SQL: the arithmetic of `amountDue` for an invoice that is not void. A fresh fragment
 * per query: MikroORM forgets a raw fragment once a query has used it.
 */
const due = () => raw((alias) => `${alias}.total_incl_vat - ${alias}.settled_amount`);

/** The SQL form of `daysOverdue(invoice, today) > 0` (invoice-collection.ts), so a list filters before it pages. */
export function overdueWhere(today: string): FilterQuery<Invoice> {
  return {
    status: 'booked',
    voidedAt: null,
    uncollectibleAt: null,
    dueDate: { $lt: today },
    [due()]: { $gt: 0 },
  };
}

/** The SQL form of `daysOverdue(invoice, today) === 0`. */
export function notOverdueWhere(today: string): FilterQuery<Invoice> {
  return {
    $or: [
      { status: { $ne: 'booked' } },
      { voidedAt: { $ne: null } },
      { uncollectibleAt: { $ne: null } },
      { dueDate: null },
      { dueDate: { $gte: today } },
      { [due()]: { $lte: 0 } },
    ],
  };
}
