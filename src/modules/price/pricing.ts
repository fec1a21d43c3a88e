import { Decimal, type DecimalValue, roundHalfAwayFromZero } from '../../money/decimal.ts';
import type { PriceModel } from './price.entity.ts';

/*
 * The price models as pure functions: quantity in, amount out, in minor units of the entry's
 * currency (cents for eur, yen for jpy). Arithmetic is exact; the one rounding, half away from
 * zero to a whole minor unit, happens at the very end. A quantity of zero always costs nothing.
 */

/** `fee`: `amount` per unit (may be a fraction of a minor unit, e.g. 0.25 cents per API call). */
export type FeeEntry = { amount: number };

/**
 * One tier of a `volume` or `graduated` entry: it covers quantities above the previous tier's
 * `upTo` up to and including its own; `upTo: null` (the last tier only) has no upper bound.
 */
export type Tier = { upTo: number | null; unitAmount: number; flatAmount?: number };
export type TieredEntry = { tiers: Tier[] };

/** `package`: `amount` per started package of `packageSize` units. */
export type PackageEntry = { amount: number; packageSize: number };

export type PricingEntryByModel = {
  fee: FeeEntry;
  volume: TieredEntry;
  graduated: TieredEntry;
  package: PackageEntry;
};
export type PricingEntry = PricingEntryByModel[PriceModel];

/** A price's `pricing`: lowercase ISO 4217 currency code -> entry of the price's model. */
export type Pricing = Record<string, PricingEntry>;

export type Quantity = DecimalValue;

function quantityOf(value: Quantity): Decimal {
  const quantity = new Decimal(value);
  if (!quantity.isFinite() || quantity.isNegative()) {
    throw new RangeError(`quantity must be a finite number >= 0, got ${String(value)}`);
  }
  return quantity;
}

/** Rounds half away from zero to a whole minor unit; refuses what a JS number cannot hold exactly. */
function toMinorUnits(amount: Decimal): number {
  const rounded = roundHalfAwayFromZero(amount).toNumber();
  if (!Number.isSafeInteger(rounded)) {
    throw new RangeError(`amount ${amount.toFixed()} exceeds the largest safe integer`);
  }
  return rounded;
}

/** Fee: every unit costs `amount`. */
function feeExact(entry: FeeEntry, quantity: Quantity): Decimal {
  return quantityOf(quantity).times(entry.amount);
}

/** The tier covering `quantity`: the first whose `upTo` is at least the quantity, or the unbounded one. */
function tierFor(tiers: Tier[], quantity: Decimal): Tier {
  const tier = tiers.find(({ upTo }) => upTo === null || quantity.lte(upTo));
  if (!tier) throw beyondLastTier(quantity);
  return tier;
}

const beyondLastTier = (quantity: Decimal) =>
  new RangeError(`quantity ${quantity.toFixed()} lies beyond the last tier, which must be unbounded`);

/** Volume: the whole quantity at the unit amount of the tier it falls into, plus that tier's flat amount. */
function volumeExact(entry: TieredEntry, quantity: Quantity): Decimal {
  const q = quantityOf(quantity);
  if (q.isZero()) return new Decimal(0);
  const tier = tierFor(entry.tiers, q);
  return q.times(tier.unitAmount).plus(tier.flatAmount ?? 0);
}

/** Graduated: each slice of the quantity at its own tier's unit amount, plus the flat amount of every tier reached. */
function graduatedExact(entry: TieredEntry, quantity: Quantity): Decimal {
  const q = quantityOf(quantity);
  let total = new Decimal(0);
  let lower = new Decimal(0);
  for (const tier of entry.tiers) {
    if (q.lte(lower)) break;
    const upper = tier.upTo === null ? q : Decimal.min(q, tier.upTo);
    total = total.plus(upper.minus(lower).times(tier.unitAmount)).plus(tier.flatAmount ?? 0);
    lower = upper;
  }
  if (q.gt(lower)) throw beyondLastTier(q);
  return total;
}

/** Package: `amount` for every started package of `packageSize` units. */
function packageExact(entry: PackageEntry, quantity: Quantity): Decimal {
  const packages = quantityOf(quantity).dividedBy(entry.packageSize).ceil();
  return packages.times(entry.amount);
}

export const feeAmount = (entry: FeeEntry, quantity: Quantity): number =>
  toMinorUnits(feeExact(entry, quantity));
export const volumeAmount = (entry: TieredEntry, quantity: Quantity): number =>
  toMinorUnits(volumeExact(entry, quantity));
export const graduatedAmount = (entry: TieredEntry, quantity: Quantity): number =>
  toMinorUnits(graduatedExact(entry, quantity));
export const packageAmount = (entry: PackageEntry, quantity: Quantity): number =>
  toMinorUnits(packageExact(entry, quantity));

const AMOUNT_BY_MODEL: { [M in PriceModel]: (entry: PricingEntryByModel[M], quantity: Quantity) => number } =
  {
    fee: feeAmount,
    volume: volumeAmount,
    graduated: graduatedAmount,
    package: packageAmount,
  };

/** The amount for `quantity` under `model`; `entry` is a validated entry of that model (a price's `pricing[currency]`). */
export function priceAmount(model: PriceModel, entry: PricingEntry, quantity: Quantity): number {
  const amount = AMOUNT_BY_MODEL[model] as (entry: PricingEntry, quantity: Quantity) => number;
  return amount(entry, quantity);
}

const EXACT_BY_MODEL: { [M in PriceModel]: (entry: PricingEntryByModel[M], quantity: Quantity) => Decimal } =
  {
    fee: feeExact,
    volume: volumeExact,
    graduated: graduatedExact,
    package: packageExact,
  };

/**
 * The amount for `quantity` under `model` before it is rounded to minor units: what proration takes a
 * share of, so that a prorated line is rounded once (DESIGN §12).
 */
export function priceAmountExact(model: PriceModel, entry: PricingEntry, quantity: Quantity): Decimal {
  const amount = EXACT_BY_MODEL[model] as (entry: PricingEntry, quantity: Quantity) => Decimal;
  return amount(entry, quantity);
}

/**
 * `share` days of a period `of` days long of the exact amount, rounded once to minor units, half away
 * from zero; RangeError beyond the safe integers.
 */
export function proratedAmount(exact: Decimal, share: number, of: number): number {
  return toMinorUnits(exact.times(share).dividedBy(of));
}

/** Decimal places an invoice line keeps in its quantity and unit amount. */
export const LINE_DECIMALS = 6;

/**
 * One invoice line of a tiered or package amount, in figures a reader can check: `quantity` ×
 * `unitAmount`, rounded half away from zero, is `amount`.
 * - `tier`: the units of tier `tier` (1-based) at its unit amount; `from`/`upTo` bound the tier.
 * - `flat`: the flat amount of tier `tier`, once.
 * - `package`: the started packages at the package amount.
 * - `rounding`: what rounding each line on its own leaves over against the amount rounded once.
 * `collapsed` marks a tier line whose unit amount (or slice) has more decimals than a line keeps: it
 * bills one unit at the slice's rounded amount and `units`/`rate` name the real figures.
 */
export type PriceLine = {
  kind: 'tier' | 'flat' | 'package' | 'rounding';
  quantity: string;
  unitAmount: string;
  amount: number;
  tier?: number;
  from?: string;
  upTo?: string | null;
  collapsed?: { units: string; rate: string };
};

const fitsLine = (value: Decimal) => value.decimalPlaces() <= LINE_DECIMALS && value.precision(true) <= 15;

/** The line of `units` at `rate` for tier `tier`: exact figures when they fit a line, else one unit. */
function tierLine(
  tier: number,
  bounds: Pick<PriceLine, 'from' | 'upTo'>,
  units: Decimal,
  rate: Decimal,
): PriceLine {
  const exact = units.times(rate);
  const amount = toMinorUnits(exact);
  if (fitsLine(units) && fitsLine(rate)) {
    return { kind: 'tier', tier, ...bounds, quantity: units.toFixed(), unitAmount: rate.toFixed(), amount };
  }
  return {
    kind: 'tier',
    tier,
    ...bounds,
    quantity: '1',
    unitAmount: String(amount),
    amount,
    collapsed: { units: units.toFixed(), rate: rate.toFixed() },
  };
}

const flatLine = (tier: number, flat: number): PriceLine => ({
  kind: 'flat',
  tier,
  quantity: '1',
  unitAmount: String(flat),
  amount: flat,
});

/**
 * The lines a `volume`, `graduated` or `package` amount for `quantity` bills: graduated, one line per
 * tier reached at its own unit amount and each reached tier's flat amount as a line of its own; volume,
 * the whole quantity at the reached tier's unit amount and its flat amount; package, the started
 * packages at the package amount. Each line is rounded on its own; when fractional unit amounts make
 * their sum differ from the amount rounded once, a `rounding` line carries the difference, so the lines
 * always add up to exactly `priceAmount`. A quantity of zero bills no lines.
 */
export function priceLines(
  model: Exclude<PriceModel, 'fee'>,
  entry: PricingEntry,
  quantity: Quantity,
): PriceLine[] {
  const q = quantityOf(quantity);
  if (q.isZero()) return [];
  const lines: PriceLine[] = [];
  if (model === 'package') {
    const { amount, packageSize } = entry as PackageEntry;
    const packages = q.dividedBy(packageSize).ceil();
    lines.push({
      kind: 'package',
      quantity: packages.toFixed(),
      unitAmount: String(amount),
      amount: toMinorUnits(packages.times(amount)),
    });
  } else {
    const { tiers } = entry as TieredEntry;
    let lower = new Decimal(0);
    for (const [index, tier] of tiers.entries()) {
      const bounds = { from: lower.toFixed(), upTo: tier.upTo === null ? null : String(tier.upTo) };
      const reached = model === 'volume' ? tier === tierFor(tiers, q) : q.gt(lower);
      if (model === 'graduated' && !reached) break;
      if (reached) {
        const upper = model === 'volume' || tier.upTo === null ? q : Decimal.min(q, tier.upTo);
        const units = model === 'volume' ? q : upper.minus(lower);
        lines.push(tierLine(index + 1, bounds, units, new Decimal(tier.unitAmount)));
        if (tier.flatAmount) lines.push(flatLine(index + 1, tier.flatAmount));
        if (model === 'volume') break;
      }
      if (tier.upTo === null) break;
      lower = new Decimal(tier.upTo);
    }
    if (model === 'graduated' && q.gt(lower) && tiers.at(-1)?.upTo !== null) throw beyondLastTier(q);
  }
  const total = priceAmount(model, entry, q);
  const rounding = total - lines.reduce((sum, line) => sum + line.amount, 0);
  if (rounding !== 0) {
    lines.push({ kind: 'rounding', quantity: '1', unitAmount: String(rounding), amount: rounding });
  }
  return lines;
}
