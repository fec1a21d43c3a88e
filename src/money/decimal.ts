import type { Decimal as DecimalType } from 'decimal.js';
import DecimalModule from 'decimal.js';

// decimal.mjs has only a default export, which its typings (read as CommonJS) do not describe.
const DecimalClass = DecimalModule as unknown as typeof DecimalType;

/**
 * The one decimal configuration every module computes money with (DESIGN §5). Inputs carry at most
 * 16 significant digits before and 12 after the point (unit amounts), so a product of a few of them,
 * a percentage or a sum of tiers stays far below 100 digits: every result is exact and the only
 * rounding is the explicit one to whole minor units. Quotients that do not terminate (a weight over a
 * sum of weights) keep 100 digits, far more than a minor unit can tell apart.
 */
export const Decimal = DecimalClass.clone({ precision: 100, rounding: DecimalClass.ROUND_HALF_UP });
export type Decimal = InstanceType<typeof Decimal>;
/** What a Decimal can be made from: a number, a decimal string or a Decimal. */
export type DecimalValue = DecimalType.Value;

/** Rounds to a whole minor unit; ties go away from zero (2.5 -> 3, -2.5 -> -3). */
export function roundHalfAwayFromZero(value: DecimalValue): Decimal {
  return new Decimal(value).toDecimalPlaces(0, Decimal.ROUND_HALF_UP);
}
