import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeLine } from '../../src/modules/invoice/invoice.arithmetic.ts';
import type { PriceModel } from '../../src/modules/price/price.entity.ts';
import {
  LINE_DECIMALS,
  type PackageEntry,
  type PricingEntry,
  priceAmount,
  priceLines,
  type TieredEntry,
} from '../../src/modules/price/pricing.ts';
import { Decimal } from '../../src/money/decimal.ts';

const RUN = { seed: 20261125, numRuns: 400 } as const;

/** Unit amounts with 0 to 12 decimals (the price input allows 12, a line keeps 6). */
const unitAmount = fc.oneof(
  fc.integer({ min: 0, max: 100_000 }),
  fc
    .tuple(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 12 }))
    .map(([units, places]) => new Decimal(units).dividedBy(new Decimal(10).pow(places)).toNumber()),
);

const tiered: fc.Arbitrary<TieredEntry> = fc
  .array(
    fc.record({
      width: fc.integer({ min: 1, max: 1000 }),
      unitAmount,
      flatAmount: fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: undefined }),
    }),
    { minLength: 1, maxLength: 6 },
  )
  .map((tiers) => {
    let upTo = 0;
    return {
      tiers: tiers.map(({ width, unitAmount, flatAmount }, index) => {
        upTo += width;
        return {
          upTo: index === tiers.length - 1 ? null : upTo,
          unitAmount,
          ...(flatAmount === undefined ? {} : { flatAmount }),
        };
      }),
    };
  });

const packaged: fc.Arbitrary<PackageEntry> = fc.record({
  amount: fc.integer({ min: 0, max: 1_000_000 }),
  packageSize: fc.integer({ min: 1, max: 1000 }),
});

/** Whole quantities and quantities with up to 8 decimals (usage sums may have more than a line keeps). */
const quantity = fc.oneof(
  fc.integer({ min: 0, max: 5000 }),
  fc
    .tuple(fc.integer({ min: 0, max: 500_000_000 }), fc.integer({ min: 1, max: 8 }))
    .map(([units, places]) => new Decimal(units).dividedBy(new Decimal(10).pow(places)).toFixed()),
);

const priced: fc.Arbitrary<{ model: Exclude<PriceModel, 'fee'>; entry: PricingEntry }> = fc.oneof(
  tiered.map((entry) => ({ model: 'graduated' as const, entry })),
  tiered.map((entry) => ({ model: 'volume' as const, entry })),
  packaged.map((entry) => ({ model: 'package' as const, entry })),
);

const fits = (value: string) =>
  new Decimal(value).decimalPlaces() <= LINE_DECIMALS && new Decimal(value).precision(true) <= 15;

describe('priceLines: the readable lines of a tiered or package amount', () => {
  it('add up to priceAmount exactly, each line being its own quantity × unit amount as an invoice rounds it', () => {
    fc.assert(
      fc.property(priced, quantity, ({ model, entry }, q) => {
        const lines = priceLines(model, entry, q);
        const total = priceAmount(model, entry, q);
        // Σ lines is the price model's amount, to the minor unit.
        expect(lines.reduce((sum, line) => sum + line.amount, 0)).toBe(total);
        for (const line of lines) {
          // What a line keeps (6 decimals, 15 digits) and what the invoice arithmetic makes of it.
          expect(fits(line.quantity) && fits(line.unitAmount)).toBe(true);
          const { amount } = computeLine({
            quantity: line.quantity,
            unitAmount: line.unitAmount,
            discountPercentage: '0',
            discountAmount: '0',
            taxRate: null,
          });
          expect(amount).toBe(line.amount);
        }
        if (new Decimal(q).isZero()) expect(lines).toEqual([]);
        if (model === 'package') {
          const { amount, packageSize } = entry as PackageEntry;
          const packages = new Decimal(q).dividedBy(packageSize).ceil().toFixed();
          if (!new Decimal(q).isZero()) {
            expect(lines).toEqual([
              { kind: 'package', quantity: packages, unitAmount: String(amount), amount: total },
            ]);
          }
          return;
        }
        const { tiers } = entry as TieredEntry;
        const tierLines = lines.filter((line) => line.kind === 'tier');
        // The real quantity: a graduated price splits it over the tiers, a volume price bills it whole.
        const units = tierLines.map((line) => line.collapsed?.units ?? line.quantity);
        if (!new Decimal(q).isZero()) {
          const sum = units.reduce((acc, value) => acc.plus(value), new Decimal(0));
          expect(sum.eq(q)).toBe(true);
          if (model === 'volume') expect(tierLines).toHaveLength(1);
        }
        for (const line of tierLines) {
          const tier = tiers[(line.tier as number) - 1];
          const rate = line.collapsed?.rate ?? line.unitAmount;
          expect(new Decimal(rate).eq(tier?.unitAmount ?? Number.NaN)).toBe(true);
          // A line shows the tier's own unit amount whenever it and the slice fit a line.
          expect(line.collapsed === undefined).toBe(
            fits(String(tier?.unitAmount)) && fits(line.collapsed?.units ?? line.quantity),
          );
          const flats = lines.filter((other) => other.kind === 'flat' && other.tier === line.tier);
          expect(flats.map((flat) => flat.amount)).toEqual(tier?.flatAmount ? [tier.flatAmount] : []);
        }
        // A rounding line appears only when there is something to round.
        const rounding = lines.filter((line) => line.kind === 'rounding');
        expect(rounding.length).toBeLessThanOrEqual(1);
        if (tiers.every((tier) => Number.isInteger(tier.unitAmount)) && new Decimal(q).isInteger()) {
          expect(rounding).toEqual([]);
        }
      }),
      RUN,
    );
  });

  it('bills graduated tiers one line each, with their flat amounts as lines of their own', () => {
    const entry: TieredEntry = {
      tiers: [
        { upTo: 10, unitAmount: 500, flatAmount: 1000 },
        { upTo: 100, unitAmount: 400 },
        { upTo: null, unitAmount: 300, flatAmount: 50 },
      ],
    };
    expect(priceLines('graduated', entry, 120)).toEqual([
      { kind: 'tier', tier: 1, from: '0', upTo: '10', quantity: '10', unitAmount: '500', amount: 5000 },
      { kind: 'flat', tier: 1, quantity: '1', unitAmount: '1000', amount: 1000 },
      { kind: 'tier', tier: 2, from: '10', upTo: '100', quantity: '90', unitAmount: '400', amount: 36000 },
      { kind: 'tier', tier: 3, from: '100', upTo: null, quantity: '20', unitAmount: '300', amount: 6000 },
      { kind: 'flat', tier: 3, quantity: '1', unitAmount: '50', amount: 50 },
    ]);
    expect(priceAmount('graduated', entry, 120)).toBe(48050);
  });

  it('rounds each line on its own and adds a rounding line for what that leaves over', () => {
    // 3 × 0.5 = 1.5 -> 2 and 3 × 0.5 = 1.5 -> 2, but the amount is 3 rounded once
    const entry: TieredEntry = {
      tiers: [
        { upTo: 3, unitAmount: 0.5 },
        { upTo: null, unitAmount: 0.5 },
      ],
    };
    expect(priceLines('graduated', entry, 6)).toEqual([
      { kind: 'tier', tier: 1, from: '0', upTo: '3', quantity: '3', unitAmount: '0.5', amount: 2 },
      { kind: 'tier', tier: 2, from: '3', upTo: null, quantity: '3', unitAmount: '0.5', amount: 2 },
      { kind: 'rounding', quantity: '1', unitAmount: '-1', amount: -1 },
    ]);
    expect(priceAmount('graduated', entry, 6)).toBe(3);
  });

  it('bills a unit amount finer than a line keeps as one unit at the rounded slice, naming the real figures', () => {
    const entry: TieredEntry = { tiers: [{ upTo: null, unitAmount: 0.0000125 }] };
    expect(priceLines('volume', entry, 1_000_000)).toEqual([
      {
        kind: 'tier',
        tier: 1,
        from: '0',
        upTo: null,
        quantity: '1',
        unitAmount: '13',
        amount: 13,
        collapsed: { units: '1000000', rate: '0.0000125' },
      },
    ]);
    expect(priceAmount('volume', entry, 1_000_000)).toBe(13);
  });
});
