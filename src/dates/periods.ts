import { addDays, addMonths, daysBetween, isWithinCalendar, LAST_DATE, monthsBetween } from './calendar.ts';

/*
 * Billing periods as pure functions of calendar dates. Period n of a term runs from boundary n to
 * boundary n + 1 (half-open: the end is the day the next period starts), and every boundary is
 * computed from the anchor (a subscription's start date), never from the previous boundary: an
 * anchor of Jan 31 has boundaries Feb 28 (29), Mar 31, Apr 30, … and never drifts to the 28th.
 * The dates are local dates of the subscription's time zone; zone.ts gives the instants they begin.
 */

export type TermUnit = 'day' | 'week' | 'month' | 'year';
export type Term = { unit: TermUnit; count: number };
export type Period = { start: string; end: string };

/** The n-th boundary of `term` counted from `anchor`; null beyond year 9999. */
export function boundary(anchor: string, term: Term, n: number): string | null {
  const steps = term.count * n;
  let date: string;
  try {
    switch (term.unit) {
      case 'day':
        date = addDays(anchor, steps);
        break;
      case 'week':
        date = addDays(anchor, 7 * steps);
        break;
      case 'month':
        date = addMonths(anchor, steps);
        break;
      case 'year':
        date = addMonths(anchor, 12 * steps);
        break;
    }
  } catch (error) {
    // Temporal refuses dates hundreds of millennia away; they lie beyond year 9999 all the same.
    if (error instanceof RangeError) return null;
    throw error;
  }
  return isWithinCalendar(date) ? date : null;
}

/** Period n of `term` anchored at `anchor`; null when it would end beyond year 9999. */
export function periodAt(anchor: string, term: Term, n: number): Period | null {
  const start = boundary(anchor, term, n);
  const end = boundary(anchor, term, n + 1);
  return start && end ? { start, end } : null;
}

/** The index of the first boundary on or after `date` (0 when `date` is not after the anchor). */
export function firstBoundaryOnOrAfter(anchor: string, term: Term, date: string): number {
  if (date <= anchor) return 0;
  const approximate =
    term.unit === 'day' || term.unit === 'week'
      ? daysBetween(anchor, date) / (term.count * (term.unit === 'week' ? 7 : 1))
      : monthsBetween(anchor, date) / (term.count * (term.unit === 'year' ? 12 : 1));
  // Boundaries only grow with n, so start just below the estimate and step up to the first one.
  let n = Math.max(0, Math.floor(approximate) - 1);
  while ((boundary(anchor, term, n) ?? LAST_DATE) < date) n += 1;
  return n;
}

/**
 * The length of the term from `start` to `end`, for renewals: whole months when `end` is `start`
 * plus some months (Jan 31 to Apr 30 is 3 months), otherwise days.
 */
export function termLength(start: string, end: string): Term {
  const months = monthsBetween(start, end);
  if (months > 0 && addMonths(start, months) === end) return { unit: 'month', count: months };
  return { unit: 'day', count: daysBetween(start, end) };
}
