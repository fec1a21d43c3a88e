import { addDays } from '../../dates/calendar.ts';

type Dated = { periodStart?: string | null; periodEnd?: string | null };

/**
 * The last day a half-open period covers: the API's `periodEnd` is the first day not covered, and
 * documents (the PDF, EN 16931 exports) name the last day covered (DESIGN §12). A period that starts
 * and ends on the same day is read as that one day.
 */
export function lastDayCovered(start: string | null | undefined, end: string): string {
  const last = addDays(end, -1);
  return start && last < start ? start : last;
}

/** A line's period as documents show it: first and last day covered, either possibly unknown. */
export function shownPeriod(item: Dated): { start: string | null; end: string | null } | null {
  if (!item.periodStart && !item.periodEnd) return null;
  return {
    start: item.periodStart ?? null,
    end: item.periodEnd ? lastDayCovered(item.periodStart, item.periodEnd) : null,
  };
}

/** The period the lines cover together (BG-14): earliest start, latest last day; null without periods. */
export function servicePeriod(items: readonly Dated[]): { start: string | null; end: string | null } | null {
  const periods = items.map(shownPeriod).filter((period) => period !== null);
  if (periods.length === 0) return null;
  const starts = periods.map((period) => period.start).filter((date): date is string => !!date);
  const ends = periods.map((period) => period.end).filter((date): date is string => !!date);
  return { start: starts.sort()[0] ?? null, end: ends.sort().at(-1) ?? null };
}
