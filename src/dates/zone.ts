import { Temporal } from 'temporal-polyfill';
import { z } from 'zod';

/*
 * Calendar dates in an IANA time zone ("Europe/Berlin"), through Temporal and the time zone data
 * Node ships with ICU. Subscription periods are calendar dates of their customer's zone; the
 * instants they begin at (a `billAt`, a usage window) are found here and nowhere else.
 */

export const DEFAULT_TIME_ZONE = 'UTC';

/**
 * The canonical spelling of an IANA time zone name (`europe/berlin` is `Europe/Berlin`), or null
 * when the name is no time zone. UTC offsets such as `+01:00` are refused: they have no rules for
 * summer time, which is what a customer's zone is for.
 */
export function timeZoneName(name: string): string | null {
  if (!/^[A-Za-z]/.test(name)) return null;
  try {
    return Temporal.Instant.fromEpochMilliseconds(0).toZonedDateTimeISO(name).timeZoneId;
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

/** The calendar date (YYYY-MM-DD) it is in `timeZone` at `instant`; years 1 to 9999. */
export function dateInZone(instant: Date, timeZone: string): string {
  const date = Temporal.Instant.fromEpochMilliseconds(instant.getTime()).toZonedDateTimeISO(timeZone);
  // 1 BC, the day before 0001-01-01 somewhere west of UTC, is year 0000 in ISO 8601.
  return date.toPlainDate().toString();
}

/**
 * The first instant of `date` in `timeZone`: local midnight, or where a clock change skips
 * midnight, the moment the day begins after it (and for a date the zone skipped altogether, as
 * Samoa did 2011-12-30, the start of the next): Temporal's start of day.
 */
export function startOfDayInZone(date: string, timeZone: string): Date {
  const start = Temporal.PlainDate.from(date).toZonedDateTime({ timeZone });
  return new Date(start.epochMilliseconds);
}

/** The first local day of `timeZone` starting at or after `time`: its own day when `time` is that day's start. */
export function dayOnOrAfterInZone(time: Date, timeZone: string): string {
  const date = dateInZone(time, timeZone);
  return startOfDayInZone(date, timeZone).getTime() === time.getTime()
    ? date
    : Temporal.PlainDate.from(date).add({ days: 1 }).toString();
}

/** An IANA time zone name as input: answered in its canonical spelling, refused when no zone has it. */
export const TimeZone = z
  .string()
  .trim()
  .max(64)
  .transform((name, ctx) => {
    const zone = timeZoneName(name);
    if (zone) return zone;
    ctx.addIssue({
      code: 'custom',
      message: `must be an IANA time zone such as Europe/Berlin, not "${name}"`,
    });
    return z.NEVER;
  });
