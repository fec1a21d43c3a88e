import type { TaxRounding } from '../../auth/environment.entity.ts';
import { allocate } from '../../money/allocate.ts';
import { Decimal, type DecimalValue, roundHalfAwayFromZero } from '../../money/decimal.ts';
import { type TaxBehavior, type TaxCategory, type TaxExempt, taxCategoryOf } from '../tax/tax-policy.ts';
import {
  computeLine,
  InvoiceArithmeticError,
  type LineAmounts,
  type LineInput,
} from './invoice.arithmetic.ts';

/** A line as the tax rules read it: its arithmetic, its tax code and whether its price includes tax. */
export type TaxLineInput = LineInput & { taxCode: string | null; taxBehavior: TaxBehavior };

/** What the lines of one group (same tax code, rate and behaviour) add up to on the invoice. */
export type TaxBreakdownRow = {
  taxCode: string | null;
  taxRate: string | null;
  taxBehavior: TaxBehavior;
  taxableAmount: number;
  taxAmount: number;
  category: TaxCategory;
  exemptionReasonCode: string | null;
  exemptionReason: string | null;
};

type Grouped = { taxCode?: string | null; taxRate?: string | null; taxBehavior: TaxBehavior };

/**
 * Lines share a group when they share the tax code, the rate and the behaviour: EN 16931 sums VAT per
 * category and rate (BR-CO-17), a code stands for a category, and inclusive and exclusive lines
 * derive their tax in opposite directions, so each kind is rounded on its own.
 */
const groupKey = (line: Grouped): string =>
  JSON.stringify([line.taxCode ?? null, line.taxRate ?? null, line.taxBehavior]);

/** The share of tax in `amount`: amount × rate / 100 on top of a net, amount × rate / (100 + rate) within a gross. */
function taxShare(amount: DecimalValue, rate: string, behavior: TaxBehavior): Decimal {
  const base = new Decimal(amount).times(rate);
  return behavior === 'exclusive' ? base.dividedBy(100) : base.dividedBy(new Decimal(rate).plus(100));
}

const MAX_AMOUNT = new Decimal(Number.MAX_SAFE_INTEGER);

function wholeTax(value: Decimal): number {
  if (value.abs().gt(MAX_AMOUNT)) {
    throw new InvoiceArithmeticError('total', 'the tax of a rate group exceeds the largest supported amount');
  }
  return value.toNumber() + 0;
}

/**
 * Every line's `amount` (net) and `taxAmount` under `rounding` (DESIGN §5, docs/tax.md).
 *
 * A line's rounded `quantity × unitAmount − discount` is its net when exclusive and its gross when
 * inclusive. `line` rounds each line's tax on its own; `document` rounds each group's tax once and
 * allocates it over the group's lines by their exact shares, so Σ line taxes = the group's tax. An
 * inclusive line's net is its gross less its tax: net + tax = the gross the buyer saw, per line.
 */
export function computeTaxedLines(lines: readonly TaxLineInput[], rounding: TaxRounding): LineAmounts[] {
  const shown = lines.map((line) => computeLine({ ...line, taxRate: null }).amount);
  const taxes = new Array<number>(lines.length).fill(0);
  const groups = new Map<string, number[]>();
  lines.forEach((line, index) => {
    if (line.taxRate === null) return;
    const key = groupKey(line);
    groups.set(key, [...(groups.get(key) ?? []), index]);
  });
  for (const indexes of groups.values()) {
    const first = lines[indexes[0] as number] as TaxLineInput;
    const rate = first.taxRate as string;
    const shares = indexes.map((index) => taxShare(shown[index] as number, rate, first.taxBehavior));
    const parts =
      rounding === 'line'
        ? shares.map((share) => wholeTax(roundHalfAwayFromZero(share)))
        : allocate(
            wholeTax(
              roundHalfAwayFromZero(
                taxShare(
                  Decimal.sum(0, ...indexes.map((index) => shown[index] as number)),
                  rate,
                  first.taxBehavior,
                ),
              ),
            ),
            shares,
          );
    indexes.forEach((index, position) => {
      taxes[index] = parts[position] as number;
    });
  }
  return lines.map((line, index) => {
    const tax = taxes[index] as number;
    const amount = shown[index] as number;
    return { amount: line.taxBehavior === 'inclusive' ? amount - tax : amount, taxAmount: tax };
  });
}

/**
 * The invoice's per-group subtotals, from its stored lines: what was booked stays what it shows.
 * Lowest rate first, as invoices print them; lines without a tax code last.
 */
export function taxBreakdown(
  lines: readonly (Grouped & { amount: number; taxAmount: number })[],
  exempt: TaxExempt,
): TaxBreakdownRow[] {
  const rows = new Map<string, TaxBreakdownRow>();
  for (const line of lines) {
    const key = groupKey(line);
    const taxRate = line.taxRate ?? null;
    const row = rows.get(key) ?? {
      taxCode: line.taxCode ?? null,
      taxRate,
      taxBehavior: line.taxBehavior,
      taxableAmount: 0,
      taxAmount: 0,
      ...taxCategoryOf(taxRate, exempt),
    };
    row.taxableAmount += line.amount;
    row.taxAmount += line.taxAmount;
    rows.set(key, row);
  }
  // Rates are at most 100 %, so 1000 puts the untaxed lines after every rate.
  const order = (row: TaxBreakdownRow) => new Decimal(row.taxRate ?? 1000);
  return [...rows.values()].sort(
    (a, b) =>
      order(a).comparedTo(order(b)) ||
      (a.taxCode ?? '').localeCompare(b.taxCode ?? '') ||
      a.taxBehavior.localeCompare(b.taxBehavior),
  );
}
