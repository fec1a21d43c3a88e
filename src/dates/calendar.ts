import { Temporal } from 'temporal-polyfill';
import { z } from 'zod';

/*
 * Calendar dates as ISO strings, YYYY-MM-DD, years 0001 to 9999 (PostgreSQL has no year 0, and
 * later years have no four-digit form). Within those years the strings sort as the dates do, so
 * `a < b` compares two dates. The arithmetic is Temporal's (the polyfill: Node has no Temporal yet).
 * Instants map to dates in UTC here; zone.ts maps them in a time zone.
 */

export const FIRST_DATE = '0001-01-01';
export const LAST_DATE = '9999-12-31';

/** Whether `date` (a result of the arithmetic below) is a date of years 0001 to 9999. */
export function isWithinCalendar(date: string): boolean {
  // Temporal writes years beyond 9999 with six digits and a sign, hence the length.
  return date.length === LAST_DATE.length && date >= FIRST_DATE && date <= LAST_DATE;
}

export function addDays(date: string, days: number): string {
  return Temporal.PlainDate.from(date).add({ days }).toString();
}

/** `date` plus `months`, the day clamped to the last of the month: Jan 31 + 1 month = Feb 28 (29). */
export function addMonths(date: string, months: number): string {
  return Temporal.PlainDate.from(date).add({ months }, { overflow: 'constrain' }).toString();
}

/** Days from `from` to `to`: 1 from one day to the next, negative when `to` is earlier. */
export function daysBetween(from: string, to: string): number {
  return Temporal.PlainDate.from(from).until(to, { largestUnit: 'days' }).days;
}

/** Whole calendar months from `from` to `to`, ignoring the days: Jan 31 to Feb 1 is 1. */
export function monthsBetween(from: string, to: string): number {
  const start = Temporal.PlainDate.from(from);
  const end = Temporal.PlainDate.from(to);
  return (end.year - start.year) * 12 + (end.month - start.month);
}

/** Midnight UTC of `date`: when a period starting or ending that day begins or ends. */
export const startOfDay = (date: string): Date => new Date(`${date}T00:00:00.000Z`);

/** The UTC calendar date of `time`. */
export const dateOf = (time: Date): string => time.toISOString().slice(0, 10);

/** Today's date in UTC. */
export const today = (now: Date = new Date()): string => dateOf(now);

/** The first day starting at or after `time`: `time` itself at midnight, else the next day. */
export function dayOnOrAfter(time: Date): string {
  const date = dateOf(time);
  return startOfDay(date).getTime() === time.getTime() ? date : addDays(date, 1);
}

/** A date that arithmetic put beyond year 9999 (or before year 1). */
export class OutsideCalendarError extends RangeError {
  constructor(what: string) {
    super(`${what} lies outside the years 0001 to 9999`);
    this.name = 'OutsideCalendarError';
  }
}

/**
 * The due date a payment term gives an invoice dated `date`: `net<N>` is N days later; any other
 * term (or none) gives none. Throws OutsideCalendarError when the due date would pass year 9999.
 */
export function dueDateFromTerm(date: string, paymentTerm: string | null | undefined): string | null {
  const days = paymentTerm ? /^net(\d+)$/.exec(paymentTerm)?.[1] : undefined;
  if (days === undefined) return null;
  const due = addDays(date, Number(days));
  if (!isWithinCalendar(due)) throw new OutsideCalendarError('the due date');
  return due;
}

/** A calendar date, YYYY-MM-DD; GraphQL's Date scalar hands over a Date at UTC midnight. */
export const CalendarDate = z.preprocess(
  (value) => (value instanceof Date && !Number.isNaN(value.getTime()) ? dateOf(value) : value),
  z.iso
    .date({ error: 'must be a date, YYYY-MM-DD' })
    // PostgreSQL has no year 0.
    .refine((date) => date >= FIRST_DATE, `must be a date from ${FIRST_DATE} on`),
);

/** A moment from year 1 to 9999, the years calendar dates can have. */
export const Instant = z
  .date({ error: 'must be a date-time' })
  .refine((time) => time.getUTCFullYear() >= 1 && time.getUTCFullYear() <= 9999, {
    error: 'must be within the years 0001 to 9999',
  });
