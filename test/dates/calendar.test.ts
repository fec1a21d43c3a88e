import { describe, expect, it } from 'vitest';
import {
  addDays,
  addMonths,
  CalendarDate,
  dateOf,
  dayOnOrAfter,
  daysBetween,
  dueDateFromTerm,
  Instant,
  isWithinCalendar,
  monthsBetween,
  OutsideCalendarError,
  startOfDay,
  today,
} from '../../src/dates/calendar.ts';

describe('calendar arithmetic on YYYY-MM-DD', () => {
  it.each([
    ['2026-01-31', 1, '2026-02-01'],
    ['2026-12-31', 1, '2027-01-01'],
    ['2028-02-28', 1, '2028-02-29'],
    ['2026-03-01', -1, '2026-02-28'],
    ['0001-01-01', 30, '0001-01-31'],
    ['0099-12-31', 1, '0100-01-01'],
    ['9999-12-01', 30, '9999-12-31'],
  ])('%s + %i days is %s', (date, days, expected) => {
    expect(addDays(date, days)).toBe(expected);
  });

  it.each([
    ['2026-01-31', 1, '2026-02-28'],
    ['2028-01-31', 1, '2028-02-29'],
    ['2026-03-31', -1, '2026-02-28'],
    ['2026-05-31', 1, '2026-06-30'],
    ['2026-11-30', 3, '2027-02-28'],
    ['2028-02-29', 12, '2029-02-28'],
    ['0050-01-15', 1, '0050-02-15'],
  ])('%s + %i months is %s, clamped to the month end', (date, months, expected) => {
    expect(addMonths(date, months)).toBe(expected);
  });

  it('counts days and calendar months between dates', () => {
    expect(daysBetween('2026-01-01', '2027-01-01')).toBe(365);
    expect(daysBetween('2028-01-01', '2029-01-01')).toBe(366);
    expect(daysBetween('2026-03-01', '2026-02-01')).toBe(-28);
    expect(monthsBetween('2026-01-31', '2026-02-01')).toBe(1);
    expect(monthsBetween('2026-01-01', '2027-12-31')).toBe(23);
  });

  it('compares as text within years 0001 to 9999, and knows what lies outside them', () => {
    expect('0999-12-31' < '1000-01-01').toBe(true);
    expect(isWithinCalendar('9999-12-31')).toBe(true);
    expect(isWithinCalendar(addDays('9999-12-31', 1))).toBe(false);
    expect(isWithinCalendar(addDays('0001-01-01', -1))).toBe(false);
  });
});

describe('instants and dates, in UTC', () => {
  it('puts an instant on its UTC date and a date on its UTC midnight', () => {
    expect(dateOf(new Date('2026-11-23T23:59:59.999Z'))).toBe('2026-11-23');
    expect(startOfDay('2026-11-23').toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(today(new Date('2026-02-28T12:00:00Z'))).toBe('2026-02-28');
    expect(today()).toBe(new Date().toISOString().slice(0, 10));
  });

  it('puts a moment on the first day starting at or after it', () => {
    expect(dayOnOrAfter(new Date('2026-03-01T00:00:00Z'))).toBe('2026-03-01');
    expect(dayOnOrAfter(new Date('2026-03-01T00:00:00.001Z'))).toBe('2026-03-02');
  });
});

describe('dueDateFromTerm: net<N> is N days after the invoice date', () => {
  it.each([
    ['2026-01-20', 'net14', '2026-02-03'],
    ['2026-01-20', 'net0', '2026-01-20'],
    ['2028-02-01', 'net30', '2028-03-02'],
    ['2026-12-15', 'net999', '2029-09-09'],
  ])('%s with %s is due %s', (date, term, due) => {
    expect(dueDateFromTerm(date, term)).toBe(due);
  });

  it('gives no due date without a net term', () => {
    expect(dueDateFromTerm('2026-01-20', null)).toBeNull();
    expect(dueDateFromTerm('2026-01-20', undefined)).toBeNull();
    expect(dueDateFromTerm('2026-01-20', 'due_on_receipt')).toBeNull();
  });

  it('refuses a due date past year 9999', () => {
    expect(dueDateFromTerm('9999-12-01', 'net30')).toBe('9999-12-31');
    expect(() => dueDateFromTerm('9999-12-01', 'net31')).toThrow(OutsideCalendarError);
  });
});

describe('CalendarDate and Instant: the input schemas', () => {
  it('takes YYYY-MM-DD strings and the UTC date of a GraphQL Date', () => {
    expect(CalendarDate.parse('2026-02-28')).toBe('2026-02-28');
    expect(CalendarDate.parse(new Date('2026-02-28T00:00:00Z'))).toBe('2026-02-28');
    expect(CalendarDate.safeParse('2026-02-30').success).toBe(false);
    expect(CalendarDate.safeParse('0000-12-31').success).toBe(false);
  });

  it('takes moments within years 0001 to 9999', () => {
    expect(Instant.safeParse(new Date('9999-12-31T23:59:59Z')).success).toBe(true);
    expect(Instant.safeParse(new Date('+010000-01-01T00:00:00Z')).success).toBe(false);
  });
});
