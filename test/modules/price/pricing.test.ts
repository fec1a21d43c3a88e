import { describe, expect, it } from 'vitest';
import {
  feeAmount,
  graduatedAmount,
  packageAmount,
  priceAmount,
  type TieredEntry,
  volumeAmount,
} from '../../../src/modules/price/pricing.ts';

// Three tiers with boundaries at 10 and 100; flat amounts on the first and the last.
const tiered: TieredEntry = {
  tiers: [
    { upTo: 10, unitAmount: 500, flatAmount: 1000 },
    { upTo: 100, unitAmount: 400 },
    { upTo: null, unitAmount: 300, flatAmount: 50 },
  ],
};

describe('feeAmount: quantity x amount, rounded half away from zero at the end', () => {
  it.each([
    [0, 1999, 0],
    [1, 1999, 1999],
    [3, 1999, 5997],
    ['0.5', 1999, 1000], // 999.5
    ['1.0005', 1000, 1001], // 1000.5
    [1, 0.25, 0], // 0.25
    [2, 0.25, 1], // 0.5: away from zero, not to even
    [3, 0.25, 1], // 0.75
    [6, 0.25, 2], // 1.5
    [10, 0.25, 3], // 2.5: away from zero, not to even
    [100, 1.005, 101], // 100.5 exactly; binary floats make it 100.4999...
    [3, 0.1, 0], // 0.3 exactly, not 0.30000000000000004
  ])('quantity %s at %s costs %s', (quantity, amount, expected) => {
    expect(feeAmount({ amount }, quantity)).toBe(expected);
  });
});

describe('volumeAmount: the whole quantity at the tier it falls into (upTo inclusive)', () => {
  it.each([
    [0, 0],
    [1, 500 + 1000],
    [9, 9 * 500 + 1000],
    [10, 10 * 500 + 1000],
    ['10.5', 10.5 * 400],
    [11, 11 * 400],
    [99, 99 * 400],
    [100, 100 * 400],
    ['100.01', 30053], // 100.01 * 300 + 50 = 30053
    [101, 101 * 300 + 50],
    [1000, 1000 * 300 + 50],
  ])('quantity %s costs %s', (quantity, expected) => {
    expect(volumeAmount(tiered, quantity)).toBe(expected);
  });
});

describe('graduatedAmount: each slice at its own tier, the flat amount of every tier reached', () => {
  it.each([
    [0, 0],
    [1, 500 + 1000],
    [9, 9 * 500 + 1000],
    [10, 10 * 500 + 1000],
    ['10.5', 6000 + 0.5 * 400],
    [11, 6000 + 400],
    [99, 6000 + 89 * 400],
    [100, 6000 + 90 * 400],
    ['100.01', 42053], // 42000 + 0.01 * 300 = 42003, plus 50 for reaching the last tier
    [101, 42000 + 300 + 50],
    [1000, 42000 + 900 * 300 + 50],
    ['10.000000000000000001', 6000], // a sliver of tier 2 is exact, and rounds away at the end
  ])('quantity %s costs %s', (quantity, expected) => {
    expect(graduatedAmount(tiered, quantity)).toBe(expected);
  });

  it('adds no flat amount for a tier the quantity does not reach', () => {
    const flatOnly: TieredEntry = {
      tiers: [
        { upTo: 5, unitAmount: 0, flatAmount: 100 },
        { upTo: null, unitAmount: 0, flatAmount: 7 },
      ],
    };
    expect(graduatedAmount(flatOnly, 5)).toBe(100);
    expect(graduatedAmount(flatOnly, 6)).toBe(107);
  });
});

describe('packageAmount: amount per started package', () => {
  it.each([
    [0, 0],
    [1, 1000],
    [99, 1000],
    [100, 1000],
    ['100.5', 2000],
    [101, 2000],
    [200, 2000],
    [201, 3000],
  ])('quantity %s in packages of 100 costs %s', (quantity, expected) => {
    expect(packageAmount({ amount: 1000, packageSize: 100 }, quantity)).toBe(expected);
  });

  it('charges every unit when the package size is 1', () => {
    expect(packageAmount({ amount: 250, packageSize: 1 }, 3)).toBe(750);
  });
});

describe('priceAmount', () => {
  it('dispatches on the price model', () => {
    expect(priceAmount('fee', { amount: 1999 }, 2)).toBe(3998);
    expect(priceAmount('volume', tiered, 11)).toBe(4400);
    expect(priceAmount('graduated', tiered, 11)).toBe(6400);
    expect(priceAmount('package', { amount: 1000, packageSize: 100 }, 101)).toBe(2000);
  });
});

describe('refusals', () => {
  it.each([[-1], ['-0.0001'], [Number.NaN], [Number.POSITIVE_INFINITY]])(
    'refuses quantity %s',
    (quantity) => {
      expect(() => feeAmount({ amount: 1 }, quantity)).toThrow(RangeError);
    },
  );

  it('refuses a quantity beyond a bounded last tier (such entries never pass validation)', () => {
    const bounded: TieredEntry = { tiers: [{ upTo: 10, unitAmount: 1 }] };
    expect(() => volumeAmount(bounded, 11)).toThrow(/beyond the last tier/);
    expect(() => graduatedAmount(bounded, 11)).toThrow(/beyond the last tier/);
    expect(graduatedAmount(bounded, 10)).toBe(10);
  });

  it('refuses an amount a JavaScript number cannot hold exactly', () => {
    expect(feeAmount({ amount: Number.MAX_SAFE_INTEGER }, 1)).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => feeAmount({ amount: Number.MAX_SAFE_INTEGER }, 2)).toThrow(/safe integer/);
  });
});
