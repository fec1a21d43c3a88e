import { daysBetween } from '../../dates/calendar.ts';
import { DomainError } from '../../errors.ts';
import { totalDue } from './invoice.arithmetic.ts';
import type { Invoice } from './invoice.entity.ts';

/**
 * What became of a booked invoice's money, beside the contract's `status` (which stays
 * `draft | booked`): `void` (cancelled, nothing due), `uncollectible` (written off, may still be
 * paid), `paid` (nothing left due), or `open`. Null for a draft.
 */
export const COLLECTION_STATUSES = ['open', 'paid', 'void', 'uncollectible'] as const;
export type CollectionStatus = (typeof COLLECTION_STATUSES)[number];

/** What is still to be paid: 0 on a void invoice, else totalInclVat − Σ settlements. */
export function amountDue(invoice: Pick<Invoice, 'voidedAt' | 'totalInclVat' | 'settledAmount'>): number {
  return invoice.voidedAt ? 0 : totalDue(invoice.totalInclVat, invoice.settledAmount);
}

export function collectionStatus(invoice: Invoice): CollectionStatus | null {
  if (invoice.status !== 'booked') return null;
  if (invoice.voidedAt) return 'void';
  if (amountDue(invoice) <= 0) return 'paid';
  return invoice.uncollectibleAt ? 'uncollectible' : 'open';
}

/**
 * Days past the due date (a `dueDate` of yesterday is 1) of a booked invoice that is neither void
 * nor uncollectible and still has something due as of `today`; 0 for any other.
 */
export function daysOverdue(invoice: Invoice, today: string): number {
  if (collectionStatus(invoice) !== 'open' || !invoice.dueDate) return 0;
  return Math.max(0, daysBetween(invoice.dueDate, today));
}

/** Refuses money on a void invoice: it was cancelled, so nothing can be settled on it. */
export function assertNotVoid(invoice: Invoice): void {
  if (invoice.voidedAt) {
    throw new DomainError('CONFLICT', `${invoice.handle} is void; nothing can be settled on it`);
  }
}
