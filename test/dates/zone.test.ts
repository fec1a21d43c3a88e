import { describe, expect, it } from 'vitest';
import { dateInZone, dayOnOrAfterInZone, startOfDayInZone, timeZoneName } from '../../src/dates/zone.ts';

describe('dateInZone: the calendar date at an instant in an IANA time zone', () => {
  it.each([
    ['2026-11-23T23:30:00Z', 'Europe/Berlin', '2026-11-24'],
    ['2026-11-23T22:59:59Z', 'Europe/Berlin', '2026-11-23'],
    ['2026-11-23T03:00:00Z', 'America/New_York', '2026-11-22'],
    ['2026-11-23T10:00:00Z', 'Pacific/Kiritimati', '2026-11-24'],
    ['2026-11-23T10:59:59Z', 'Pacific/Pago_Pago', '2026-11-22'],
    ['2026-01-01T00:00:00Z', 'UTC', '2026-01-01'],
    ['0001-01-01T00:00:00Z', 'America/Los_Angeles', '0000-12-31'],
    ['9999-12-31T12:00:00Z', 'Asia/Tokyo', '9999-12-31'],
  ])('%s in %s is %s', (instant, zone, date) => {
    expect(dateInZone(new Date(instant), zone)).toBe(date);
  });

  it('refuses a time zone that does not exist', () => {
    expect(() => dateInZone(new Date(), 'Mars/Olympus_Mons')).toThrow(RangeError);
  });
});

describe('startOfDayInZone: the instant a local date begins', () => {
  it.each([
    ['2026-11-23', 'UTC', '2026-11-23T00:00:00.000Z'],
    ['2026-11-23', 'Europe/Berlin', '2026-11-22T23:00:00.000Z'],
    ['2026-07-01', 'Europe/Berlin', '2026-06-30T22:00:00.000Z'],
    ['2026-01-01', 'Asia/Kolkata', '2025-12-31T18:30:00.000Z'],
    ['2026-01-01', 'Asia/Kathmandu', '2025-12-31T18:15:00.000Z'],
    ['2026-11-23', 'Pacific/Kiritimati', '2026-11-22T10:00:00.000Z'],
    // The days the clocks change start at midnight all the same.
    ['2026-03-29', 'Europe/Berlin', '2026-03-28T23:00:00.000Z'],
    ['2026-11-01', 'America/New_York', '2026-11-01T04:00:00.000Z'],
    // Brazil's summer time began at midnight: 2018-11-04 had no 00:00 and began at 01:00 (-02:00).
    ['2018-11-04', 'America/Sao_Paulo', '2018-11-04T03:00:00.000Z'],
    // Samoa skipped 2011-12-30 when it crossed the date line; the next day starts where it would have.
    ['2011-12-30', 'Pacific/Apia', '2011-12-30T10:00:00.000Z'],
    ['2011-12-31', 'Pacific/Apia', '2011-12-30T10:00:00.000Z'],
  ])('%s in %s starts at %s', (date, zone, instant) => {
    expect(startOfDayInZone(date, zone).toISOString()).toBe(instant);
  });

  it('is the first instant whose local date is that date', () => {
    for (const zone of ['Europe/Berlin', 'America/Sao_Paulo', 'Australia/Lord_Howe', 'Asia/Tokyo']) {
      for (const date of ['2018-11-04', '2026-03-29', '2026-10-04', '2026-10-25']) {
        const start = startOfDayInZone(date, zone);
        expect(dateInZone(start, zone)).toBe(date);
        expect(dateInZone(new Date(start.getTime() - 1), zone) < date).toBe(true);
      }
    }
  });
});

describe('timeZoneName: IANA names only, in canonical spelling', () => {
  it.each([
    ['Europe/Berlin', 'Europe/Berlin'],
    ['america/new_york', 'America/New_York'],
    ['UTC', 'UTC'],
    ['Pacific/Apia', 'Pacific/Apia'],
  ])('%s is %s', (name, canonical) => {
    expect(timeZoneName(name)).toBe(canonical);
  });

  it.each(['Mars/Olympus_Mons', '+01:00', '-05:00', 'CEST', ''])('%s is no time zone', (name) => {
    expect(timeZoneName(name)).toBeNull();
  });
});

describe('dayOnOrAfterInZone: the first local day starting at or after an instant', () => {
  it.each([
    ['2026-03-28T23:00:00.000Z', 'Europe/Berlin', '2026-03-29'],
    ['2026-03-28T23:00:00.001Z', 'Europe/Berlin', '2026-03-30'],
    ['2026-03-08T05:00:00.000Z', 'America/New_York', '2026-03-08'],
    ['2026-01-30T18:30:00.000Z', 'Asia/Kolkata', '2026-01-31'],
    ['2026-01-30T11:00:01.000Z', 'Pacific/Apia', '2026-02-01'],
  ])('%s in %s is %s', (instant, zone, date) => {
    expect(dayOnOrAfterInZone(new Date(instant), zone)).toBe(date);
  });
});
