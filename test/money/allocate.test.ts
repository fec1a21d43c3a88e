import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocate } from '../../src/money/allocate.ts';
import { Decimal } from '../../src/money/decimal.ts';

const decimals = (values: (string | number)[]) => values.map((value) => new Decimal(value));

/** Fixed, so a failure reproduces exactly on every machine. */
const RUN = { seed: 20261123, numRuns: 500 } as const;

/**
 * Shares with up to 6 decimals, positive and negative, and a total the rule can make up from them.
 * Quarters among them make ties between fractional parts common.
 */
const share = fc.oneof(
  fc
    .integer({ min: -1_000_000_000, max: 1_000_000_000 })
    .map((micro) => new Decimal(micro).dividedBy(1_000_000)),
  fc.integer({ min: -20, max: 20 }).map((quarters) => new Decimal(quarters).dividedBy(4)),
);
const sharesAndTotal = fc.array(share, { minLength: 1, maxLength: 12 }).chain((shares) => {
  // A total from 0 up may exceed the shares rounded down by up to one unit per share; a negative
  // one, mirrored, may fall short of the shares rounded up by as much.
  const floors = shares.reduce((sum, share) => sum + share.floor().toNumber(), 0);
  const ceilings = shares.reduce((sum, share) => sum + share.ceil().toNumber(), 0);
  const n = shares.length;
  const totals = [
    ...(floors + n >= 0 ? [fc.integer({ min: Math.max(0, floors), max: floors + n })] : []),
    ...(ceilings - n < 0 ? [fc.integer({ min: ceilings - n, max: Math.min(-1, ceilings) })] : []),
  ];
  return fc.tuple(fc.constant(shares), fc.oneof(...totals));
});

describe('allocate: each share rounded down, the leftover units to the largest fractional parts', () => {
  it.each([
    { total: 10, shares: ['3.3', '3.3', '3.4'], parts: [3, 3, 4] },
    { total: 10, shares: ['3.33', '3.33', '3.34'], parts: [3, 3, 4] },
    { total: 100, shares: ['33.3333', '33.3333', '33.3333'], parts: [34, 33, 33] },
    { total: 3, shares: ['1.5', '1.5'], parts: [2, 1] },
    { total: 2, shares: ['0.5', '0.5', '0.5', '0.5'], parts: [1, 1, 0, 0] },
    { total: 5, shares: ['1', '2', '2'], parts: [1, 2, 2] },
    { total: 0, shares: [], parts: [] },
    { total: 0, shares: ['0', '0'], parts: [0, 0] },
    { total: 7, shares: ['7'], parts: [7] },
    // The group VAT of 19 % on 3 × 0.05: round(0.0285) = 0, so nobody gets a unit.
    { total: 0, shares: ['0.0095', '0.0095', '0.0095'], parts: [0, 0, 0] },
    // Round(Σ) may leave every share its unit: 0.6 × 3 = 1.8 -> 2.
    { total: 2, shares: ['0.6', '0.6', '0.6'], parts: [1, 1, 0] },
    // A discount line's negative share in a positive total.
    { total: 5, shares: ['7.6', '-2.6'], parts: [8, -3] },
  ])('$total over $shares is $parts', ({ total, shares, parts }) => {
    expect(allocate(total, decimals(shares))).toEqual(parts);
  });

  it.each([
    { total: -3, shares: ['-1.5', '-1.5'], parts: [-2, -1] },
    { total: -10, shares: ['-3.3', '-3.3', '-3.4'], parts: [-3, -3, -4] },
    { total: -100, shares: ['-33.3333', '-33.3333', '-33.3333'], parts: [-34, -33, -33] },
    { total: -5, shares: ['-7.6', '2.6'], parts: [-8, 3] },
    { total: -1, shares: ['-0.2', '-0.8'], parts: [0, -1] },
  ])('mirrors a negative total: $total over $shares is $parts', ({ total, shares, parts }) => {
    expect(allocate(total, decimals(shares))).toEqual(parts);
  });

  it('splits a total over shares that are a non-terminating quotient (a third each)', () => {
    const third = new Decimal(100).dividedBy(3);
    expect(allocate(100, [third, third, third])).toEqual([34, 33, 33]);
  });

  it.each([
    { total: 13, shares: ['3.3', '3.3', '3.4'], why: 'more units left over than there are shares' },
    { total: 8, shares: ['3.3', '3.3', '3.4'], why: 'less than the shares rounded down' },
    { total: 1, shares: [], why: 'no shares to put a unit on' },
    { total: 1.5, shares: ['1.5'], why: 'a total that is not a whole number of units' },
  ])('refuses $total over $shares: $why', ({ total, shares }) => {
    expect(() => allocate(total, decimals(shares))).toThrow(RangeError);
  });

  it('refuses shares that are not finite numbers', () => {
    expect(() => allocate(0, [new Decimal(Number.NaN)])).toThrow(RangeError);
    expect(() => allocate(0, [new Decimal(Number.POSITIVE_INFINITY)])).toThrow(RangeError);
  });

  it('refuses parts beyond the safe integers', () => {
    expect(() => allocate(0, decimals(['9007199254740993', '-9007199254740993']))).toThrow(RangeError);
  });
});

describe('allocate: properties', () => {
  it('parts sum to the total exactly, each at most one unit from its share', () => {
    fc.assert(
      fc.property(sharesAndTotal, ([shares, total]) => {
        const parts = allocate(total, shares);
        expect(parts).toHaveLength(shares.length);
        expect(parts.reduce((sum, part) => sum + part, 0)).toBe(total);
        for (const [index, part] of parts.entries()) {
          expect(Number.isSafeInteger(part)).toBe(true);
          expect(
            new Decimal(part)
              .minus(shares[index] as Decimal)
              .abs()
              .lte(1),
          ).toBe(true);
        }
      }),
      RUN,
    );
  });

  it('a non-negative total: every part is its share rounded down, or up by the one leftover unit it was given', () => {
    fc.assert(
      fc.property(
        sharesAndTotal.filter(([, total]) => total >= 0),
        ([shares, total]) => {
          const parts = allocate(total, shares);
          const fraction = (index: number) =>
            (shares[index] as Decimal).minus((shares[index] as Decimal).floor());
          const raised = parts.flatMap((part, index) =>
            part === (shares[index] as Decimal).floor().toNumber() ? [] : [index],
          );
          for (const index of raised)
            expect(parts[index]).toBe((shares[index] as Decimal).floor().toNumber() + 1);
          // No share left at its floor has a larger fractional part, or an equal one and an earlier place.
          for (const up of raised) {
            for (const [down] of parts.entries()) {
              if (raised.includes(down)) continue;
              const order = fraction(up).comparedTo(fraction(down));
              expect(order > 0 || (order === 0 && up < down)).toBe(true);
            }
          }
        },
      ),
      RUN,
    );
  });

  it('a negative total is the mirror image of its positive', () => {
    fc.assert(
      fc.property(
        sharesAndTotal.filter(([, total]) => total > 0),
        ([shares, total]) => {
          const mirrored = allocate(
            -total,
            shares.map((share) => share.negated()),
          );
          expect(mirrored).toEqual(allocate(total, shares).map((part) => 0 - part));
        },
      ),
      RUN,
    );
  });

  it('shares that sum to the total exactly come out unchanged when whole', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1_000_000, max: 1_000_000 }), { maxLength: 12 }), (units) => {
        const total = units.reduce((sum, unit) => sum + unit, 0);
        expect(allocate(total, decimals(units))).toEqual(units.map((unit) => unit + 0));
      }),
      RUN,
    );
  });
});
