import { addDays, addMonths, daysBetween } from '../../dates/calendar.ts';
import { allocate } from '../../money/allocate.ts';
import { Decimal } from '../../money/decimal.ts';
import type { RecognitionStrategy } from './account-set.entity.ts';

/** One row of a schedule: `amount` is recognized on `date` (the last day of the span it covers). */
export type ScheduleRow = { date: string; amount: number };

/** Spans `[start, end)` of a service period, each with its weight in the schedule. */
type Span = { start: string; end: string; weight: number };

/** Months counted from the period's start, the last one cut at the end (a shorter remainder is a share too). */
function monthsFromStart(periodStart: string, periodEnd: string): Span[] {
  const spans: Span[] = [];
  for (let k = 0; ; k++) {
    const start = addMonths(periodStart, k);
    if (start >= periodEnd) return spans;
    const next = addMonths(periodStart, k + 1);
    spans.push({ start, end: next < periodEnd ? next : periodEnd, weight: 1 });
  }
}

/** Calendar months the period touches, each weighted by its days in the period. */
function calendarMonths(periodStart: string, periodEnd: string): Span[] {
  const spans: Span[] = [];
  let start = periodStart;
  while (start < periodEnd) {
    const firstOfNext = addMonths(`${start.slice(0, 7)}-01`, 1);
    const end = firstOfNext < periodEnd ? firstOfNext : periodEnd;
    spans.push({ start, end, weight: daysBetween(start, end) });
    start = end;
  }
  return spans;
}

function days(periodStart: string, periodEnd: string): Span[] {
  const spans: Span[] = [];
  for (let day = periodStart; day < periodEnd; day = addDays(day, 1)) {
    spans.push({ start: day, end: addDays(day, 1), weight: 1 });
  }
  return spans;
}

/**
 * The schedule of a line's net amount `net` over `[periodStart, periodEnd)` under `strategy`
 * (DESIGN §11): `allocate(net, …)` over the rows' weights, so the rows sum to `net` exactly and the
 * earlier rows take the leftover units. `none`, or an empty period, has no schedule.
 */
export function recognitionSchedule(
  strategy: RecognitionStrategy,
  net: number,
  periodStart: string,
  periodEnd: string,
): ScheduleRow[] {
  if (strategy === 'none' || periodEnd <= periodStart) return [];
  const spans =
    strategy === 'even_distribution'
      ? monthsFromStart(periodStart, periodEnd)
      : strategy === 'daily_accrual'
        ? calendarMonths(periodStart, periodEnd)
        : days(periodStart, periodEnd);
  const total = spans.reduce((sum, span) => sum + span.weight, 0);
  const amounts = allocate(
    net,
    spans.map((span) => new Decimal(net).times(span.weight).dividedBy(total)),
  );
  return spans.map((span, index) => ({ date: addDays(span.end, -1), amount: amounts[index] as number }));
}

/** What the schedule has recognized as of `asOf`: every row dated before it. */
export const recognizedAsOf = (rows: readonly ScheduleRow[], asOf: string): number =>
  rows.reduce((sum, row) => (row.date < asOf ? sum + row.amount : sum), 0);

/**
 * A credit of `credit` on a line of which `recognized` is recognized and the unposted rows `open`
 * are still deferred: the credit splits in proportion between the two, and the deferred part comes
 * off the open rows in proportion to their amounts. Returns the part taken from income and each
 * open row's new amount.
 */
export function creditAgainstSchedule(
  credit: number,
  recognized: number,
  open: readonly number[],
): { fromIncome: number; rows: number[] } {
  const deferred = open.reduce((sum, amount) => sum + amount, 0);
  const outstanding = recognized + deferred;
  if (outstanding === 0) return { fromIncome: 0, rows: [...open] };
  const [fromIncome, fromDeferral] = allocate(credit, [
    new Decimal(credit).times(recognized).dividedBy(outstanding),
    new Decimal(credit).times(deferred).dividedBy(outstanding),
  ]) as [number, number];
  if (deferred === 0) return { fromIncome, rows: [...open] };
  const taken = allocate(
    fromDeferral,
    open.map((amount) => new Decimal(fromDeferral).times(amount).dividedBy(deferred)),
  );
  return { fromIncome, rows: open.map((amount, index) => amount - (taken[index] as number)) };
}
