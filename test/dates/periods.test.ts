import { describe, expect, it } from 'vitest';
import { addMonths } from '../../src/dates/calendar.ts';
import { boundary, firstBoundaryOnOrAfter, periodAt, termLength } from '../../src/dates/periods.ts';

const monthly = { unit: 'month', count: 1 } as const;

describe('period boundaries, anchored at the subscription start', () => {
  it('clamp to the month end without drifting: Jan 31 bills Feb 28, then Mar 31', () => {
    expect([0, 1, 2, 3, 4].map((n) => boundary('2026-01-31', monthly, n))).toEqual([
      '2026-01-31',
      '2026-02-28',
      '2026-03-31',
      '2026-04-30',
      '2026-05-31',
    ]);
  });

  it('reach Feb 29 in leap years, and Feb 28 again after', () => {
    expect(boundary('2028-01-31', monthly, 1)).toBe('2028-02-29');
    expect(boundary('2028-02-29', { unit: 'year', count: 1 }, 1)).toBe('2029-02-28');
    expect(boundary('2028-02-29', { unit: 'year', count: 1 }, 4)).toBe('2032-02-29');
  });

  it.each([
    [{ unit: 'day', count: 30 }, 2, '2026-03-02'],
    [{ unit: 'week', count: 2 }, 3, '2026-02-12'],
    [{ unit: 'month', count: 3 }, 2, '2026-07-01'],
    [{ unit: 'year', count: 2 }, 1, '2028-01-01'],
  ] as const)('count %o x %i from 2026-01-01 to %s', (term, n, expected) => {
    expect(boundary('2026-01-01', term, n)).toBe(expected);
  });

  it('cross year ends and stop at year 9999', () => {
    expect(addMonths('2026-11-30', 3)).toBe('2027-02-28');
    expect(addMonths('0001-01-31', 1)).toBe('0001-02-28');
    expect(boundary('9999-12-01', monthly, 1)).toBeNull();
    expect(periodAt('9999-11-01', monthly, 1)).toBeNull();
    expect(periodAt('9999-11-01', monthly, 0)).toEqual({ start: '9999-11-01', end: '9999-12-01' });
  });

  it('find the first boundary on or after a day', () => {
    expect(firstBoundaryOnOrAfter('2026-01-31', monthly, '2026-01-01')).toBe(0);
    expect(firstBoundaryOnOrAfter('2026-01-31', monthly, '2026-01-31')).toBe(0);
    expect(firstBoundaryOnOrAfter('2026-01-31', monthly, '2026-02-01')).toBe(1);
    expect(firstBoundaryOnOrAfter('2026-01-31', monthly, '2026-02-28')).toBe(1);
    expect(firstBoundaryOnOrAfter('2026-01-31', monthly, '2026-03-01')).toBe(2);
    expect(firstBoundaryOnOrAfter('2026-01-01', { unit: 'week', count: 1 }, '2026-01-09')).toBe(2);
    expect(firstBoundaryOnOrAfter('2026-01-01', { unit: 'year', count: 1 }, '2036-06-01')).toBe(11);
  });

  it('measure renewal terms in months when the term is whole months, else in days', () => {
    expect(termLength('2026-01-31', '2026-04-30')).toEqual({ unit: 'month', count: 3 });
    expect(termLength('2026-01-01', '2027-01-01')).toEqual({ unit: 'month', count: 12 });
    expect(termLength('2026-01-01', '2026-01-15')).toEqual({ unit: 'day', count: 14 });
    expect(termLength('2026-01-15', '2026-02-20')).toEqual({ unit: 'day', count: 36 });
  });
});
