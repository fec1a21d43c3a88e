import type { TermUnit } from '../price/price.entity.ts';

/*
 * Billing periods as pure functions of calendar dates (YYYY-MM-DD, UTC). Period n of an item runs
 * from boundary n to boundary n + 1 (half-open: the end is the day the next period starts), and
 * every boundary is computed from the subscription's start date, never from the previous boundary:
 * a subscription starting Jan 31 has boundaries Feb 28 (29), Mar 31, Apr 30, … and never drifts to
 * the 28th.
 */

export type Term = { unit: TermUnit; count: number };
export type Period = { start: string; end: string };

/** Dates past this have no four-digit year; periods that would reach beyond it do not exist. */
const LAST_DATE = '9999-12-31';
const DAY_MS = 86_400_000;

const pad = (value: number, width: number) => String(value).padStart(width, '0');

function formatDate(year: number, monthIndex: number, day: number): string {
  return `${pad(year, 4)}-${pad(monthIndex + 1, 2)}-${pad(day, 2)}`;
}

function parts(date: string): [number, number, number] {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return [year, month - 1, day];
}

/** Days since 1970-01-01 (negative before). */
function dayNumber(date: string): number {
  const [year, monthIndex, day] = parts(date);
  const utc = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not read years 0-99 as 1900-1999.
  utc.setUTCFullYear(year, monthIndex, day);
  return Math.round(utc.getTime() / DAY_MS);
}

function fromDayNumber(days: number): string {
  const utc = new Date(days * DAY_MS);
  return formatDate(utc.getUTCFullYear(), utc.getUTCMonth(), utc.getUTCDate());
}

function daysInMonth(year: number, monthIndex: number): number {
  const utc = new Date(0);
  utc.setUTCFullYear(year, monthIndex + 1, 0);
  return utc.getUTCDate();
}

export function addDays(date: string, days: number): string {
  return fromDayNumber(dayNumber(date) + days);
}

/** `date` plus `months`, the day clamped to the last of the month: Jan 31 + 1 month = Feb 28 (29). */
export function addMonths(date: string, months: number): string {
  const [year, monthIndex, day] = parts(date);
  const total = year * 12 + monthIndex + months;
  const targetYear = Math.floor(total / 12);
  const targetMonth = total - targetYear * 12;
  return formatDate(targetYear, targetMonth, Math.min(day, daysInMonth(targetYear, targetMonth)));
}

/** Whole months from `from` to `to`, ignoring the days. */
function monthsBetween(from: string, to: string): number {
  const [fromYear, fromMonth] = parts(from);
  const [toYear, toMonth] = parts(to);
  return (toYear - fromYear) * 12 + (toMonth - fromMonth);
}

/** The n-th boundary of `term` counted from `anchor`; null beyond year 9999. */
export function boundary(anchor: string, term: Term, n: number): string | null {
  const steps = term.count * n;
  let date: string;
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
  // A five-digit year sorts before 9999 as text, hence the length.
  return date.length === LAST_DATE.length && date <= LAST_DATE ? date : null;
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
      ? (dayNumber(date) - dayNumber(anchor)) / (term.count * (term.unit === 'week' ? 7 : 1))
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
  return { unit: 'day', count: dayNumber(end) - dayNumber(start) };
}

/** Midnight UTC of `date`: when a period starting or ending that day begins or ends. */
export const startOfDay = (date: string): Date => new Date(`${date}T00:00:00.000Z`);

/** The UTC calendar date of `time`. */
export const dateOf = (time: Date): string => time.toISOString().slice(0, 10);

/** The first day starting at or after `time`: `time` itself at midnight, else the next day. */
export function dayOnOrAfter(time: Date): string {
  const date = dateOf(time);
  return startOfDay(date).getTime() === time.getTime() ? date : addDays(date, 1);
}
