/*
 * Calendar dates in an IANA time zone ("Europe/Berlin"), through Intl and the time zone data Node
 * ships with ICU; Node 24 has no Temporal without a flag.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    // Throws a RangeError for a time zone ICU does not know.
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      calendar: 'gregory',
      numberingSystem: 'latn',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
    });
    formatters.set(timeZone, format);
  }
  return format;
}

/** The calendar date (YYYY-MM-DD) it is in `timeZone` at `instant`; years 1 to 9999. */
export function dateInZone(instant: Date, timeZone: string): string {
  const fields: Partial<Record<Intl.DateTimeFormatPartTypes, string>> = {};
  for (const { type, value } of formatter(timeZone).formatToParts(instant)) fields[type] = value;
  // 1 BC, the day before 0001-01-01 somewhere east of UTC, is year 0000.
  const year = fields.era === 'BC' ? 1 - Number(fields.year) : Number(fields.year);
  return `${String(year).padStart(4, '0')}-${fields.month?.padStart(2, '0')}-${fields.day?.padStart(2, '0')}`;
}

/** UTC offsets lie within ±18 hours, so a day's first instant in any zone is within these bounds. */
const SPAN_SECONDS = 18 * 3600;

/**
 * The first instant of `date` in `timeZone`: local midnight, or where a clock change skips
 * midnight, the moment the day begins after it (and for a date the zone skipped altogether, as
 * Samoa did 2011-12-30, the start of the next). Found by bisection over whole seconds (offsets and
 * their changes are whole seconds), which needs no offset rules: the local date never goes back as
 * time goes on, so the first second whose local date is `date` or later is the one.
 */
export function startOfDayInZone(date: string, timeZone: string): Date {
  const midnightUtc = Date.parse(`${date}T00:00:00.000Z`) / 1000;
  let before = midnightUtc - SPAN_SECONDS;
  let from = midnightUtc + SPAN_SECONDS;
  while (from - before > 1) {
    const middle = Math.floor((before + from) / 2);
    if (dateInZone(new Date(middle * 1000), timeZone) < date) before = middle;
    else from = middle;
  }
  return new Date(from * 1000);
}
