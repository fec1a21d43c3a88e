import { Decimal, roundHalfAwayFromZero } from '../../money/decimal.ts';

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

const MAX_AMOUNT = new Decimal(Number.MAX_SAFE_INTEGER);

function toSafeInteger(value: Decimal, field: InvoiceArithmeticError['field'], what: string): number {
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
  const gross = new Decimal(line.quantity).times(line.unitAmount);
  const discount = gross.times(line.discountPercentage).dividedBy(100).plus(line.discountAmount);
  if (!discount.isZero() && (discount.abs().gt(gross.abs()) || discount.isNeg() !== gross.isNeg())) {
    throw new InvoiceArithmeticError(
      'discount',
      `the discount (${discount.toFixed()}) exceeds the line's gross amount (${gross.toFixed()})`,
    );
  }
  const amount = roundHalfAwayFromZero(gross.minus(discount));
  const taxAmount =
    line.taxRate === null ? new Decimal(0) : roundHalfAwayFromZero(amount.times(line.taxRate).dividedBy(100));
  return {
    amount: toSafeInteger(amount, 'amount', 'the line amount'),
    taxAmount: toSafeInteger(taxAmount, 'amount', 'the line tax amount'),
  };
}

/** Sums of the lines' amounts; refuses totals beyond the int64 range JavaScript keeps exact. */
export function invoiceTotals(lines: readonly LineAmounts[]): InvoiceTotals {
  let excl = new Decimal(0);
  let vat = new Decimal(0);
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
  return toSafeInteger(new Decimal(totalInclVat).minus(settledAmount), 'total', 'the amount due');
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
