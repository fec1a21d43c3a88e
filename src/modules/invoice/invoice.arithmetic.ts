import type { Decimal } from 'decimal.js';
import DecimalModule from 'decimal.js';

// decimal.mjs has only a default export, which its typings (read as CommonJS) do not describe.
const DecimalClass = DecimalModule as unknown as typeof Decimal;

/**
 * Decimal arithmetic for invoice figures (DESIGN §5). The precision is far above what the accepted
 * inputs can produce (15 significant digits times 15 times a 7-digit percentage), so every product
 * and quotient is exact and the only rounding is the explicit one to whole minor units.
 */
export const Exact = DecimalClass.clone({ precision: 64, rounding: DecimalClass.ROUND_HALF_UP });
export type Exact = InstanceType<typeof Exact>;

export const SETTLEMENT_STATUSES = ['settled', 'over_settled', 'under_settled', 'not_settled'] as const;
export type SettlementStatus = (typeof SETTLEMENT_STATUSES)[number];

/** What the arithmetic of one line needs. Decimal strings are exact; percentages: "25" is 25 %. */
export type LineInput = {
  quantity: string;
  unitAmount: string;
  discountPercentage: string;
  discountAmount: string;
  /** Null when the line is not taxable. */
  taxRate: string | null;
};

export type LineAmounts = { amount: number; taxAmount: number };

export type InvoiceTotals = { totalExclVat: number; totalVat: number; totalInclVat: number };

/**
 * A figure the rules refuse: a line's `discount`, a line `amount` too large, or an invoice `total`
 * too large.
 */
export class InvoiceArithmeticError extends Error {
  readonly field: 'discount' | 'amount' | 'total';

  constructor(field: InvoiceArithmeticError['field'], message: string) {
    super(message);
    this.name = 'InvoiceArithmeticError';
    this.field = field;
  }
}

const MAX_AMOUNT = new Exact(Number.MAX_SAFE_INTEGER);

/** Rounds to a whole minor unit; ties go away from zero (2.5 -> 3, -2.5 -> -3). */
export function roundHalfAwayFromZero(value: Exact): Exact {
  return value.toDecimalPlaces(0, Exact.ROUND_HALF_UP);
}

function toSafeInteger(value: Exact, field: InvoiceArithmeticError['field'], what: string): number {
  if (value.abs().gt(MAX_AMOUNT)) {
    throw new InvoiceArithmeticError(field, `${what} exceeds the largest supported amount`);
  }
  // Integral and within 2^53 − 1, so the conversion to a JS number is exact.
  return value.isZero() ? 0 : value.toNumber();
}

/**
 * amount = round(quantity × unitAmount − discount), discount = gross × percentage / 100 + discount
 * amount; taxAmount = round(amount × taxRate / 100). A discount must reduce the line: it has the
 * sign of the gross amount and is at most as large.
 */
export function computeLine(line: LineInput): LineAmounts {
  const gross = new Exact(line.quantity).times(line.unitAmount);
  const discount = gross.times(line.discountPercentage).dividedBy(100).plus(line.discountAmount);
  if (!discount.isZero() && (discount.abs().gt(gross.abs()) || discount.isNeg() !== gross.isNeg())) {
    throw new InvoiceArithmeticError(
      'discount',
      `the discount (${discount.toFixed()}) exceeds the line's gross amount (${gross.toFixed()})`,
    );
  }
  const amount = roundHalfAwayFromZero(gross.minus(discount));
  const taxAmount =
    line.taxRate === null ? new Exact(0) : roundHalfAwayFromZero(amount.times(line.taxRate).dividedBy(100));
  return {
    amount: toSafeInteger(amount, 'amount', 'the line amount'),
    taxAmount: toSafeInteger(taxAmount, 'amount', 'the line tax amount'),
  };
}

/** Sums of the lines' amounts; refuses totals beyond the int64 range JavaScript keeps exact. */
export function invoiceTotals(lines: readonly LineAmounts[]): InvoiceTotals {
  let excl = new Exact(0);
  let vat = new Exact(0);
  for (const line of lines) {
    excl = excl.plus(line.amount);
    vat = vat.plus(line.taxAmount);
  }
  return {
    totalExclVat: toSafeInteger(excl, 'total', 'the invoice total'),
    totalVat: toSafeInteger(vat, 'total', 'the invoice tax total'),
    totalInclVat: toSafeInteger(excl.plus(vat), 'total', 'the invoice total'),
  };
}

/** What is still to be paid; negative when more was settled than the invoice is worth. */
export function totalDue(totalInclVat: number, settledAmount: number): number {
  return toSafeInteger(new Exact(totalInclVat).minus(settledAmount), 'total', 'the amount due');
}

/**
 * DESIGN §5, read in the direction of the total: for a negative total (money owed to the customer)
 * "less" and "more" are measured away from zero, the same as for a positive one.
 */
export function settlementStatus(totalInclVat: number, settledAmount: number): SettlementStatus {
  if (settledAmount === totalInclVat) return 'settled';
  if (settledAmount === 0) return 'not_settled';
  const direction = totalInclVat < 0 ? -1 : 1;
  return direction * (totalInclVat - settledAmount) > 0 ? 'under_settled' : 'over_settled';
}
