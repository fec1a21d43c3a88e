import { DomainError, type FieldIssue, type FieldPath } from '../../errors.ts';
import { Decimal } from '../../money/decimal.ts';
import type { CreditNoteFreeLine, CreditNoteInput, CreditNoteLine } from './credit-note.input.ts';
import { InvoiceArithmeticError } from './invoice.arithmetic.ts';
import { ITEM_FIELDS, type ItemFields } from './invoice.change.ts';
import type { InvoiceItem } from './invoice.entity.ts';
import { computeTaxedLines } from './invoice.tax.ts';

/** A line of a credit note to be: what it credits (null for a free line) and its fields. */
export type CreditLine = { creditedItemId: string | null; fields: ItemFields };

/** An invoice line and how much of its net amount credit notes (drafts included) have not taken yet. */
export type Creditable = { line: InvoiceItem; left: number };

const copyOf = (line: InvoiceItem): ItemFields =>
  Object.fromEntries(ITEM_FIELDS.map((field) => [field, line[field]])) as ItemFields;

/** The lines a credit note takes for `input` (docs/credit-balance.md, "Credit notes"). */
export function creditLines(
  creditable: Creditable[],
  input: CreditNoteInput,
  freeLineTaxRates: Map<string, string>,
): CreditLine[] {
  if (input.lines || input.freeLines) {
    return [
      ...partLines(creditable, input.lines ?? []),
      ...(input.freeLines ?? []).map((line, index) => freeLine(line, index, freeLineTaxRates)),
    ];
  }
  const chosen = input.itemIds
    ? wholeLines(creditable, input.itemIds)
    : creditable.filter((c) => c.left !== 0);
  return chosen.map(remainderOf);
}

/** What is left of a line: the line itself when nothing was credited yet, else the rest by amount. */
function remainderOf({ line, left }: Creditable): CreditLine {
  if (left === line.amount) return { creditedItemId: line.id, fields: copyOf(line) };
  return { creditedItemId: line.id, fields: byAmount(line, left, ['itemIds']) };
}

function wholeLines(creditable: Creditable[], itemIds: string[]): Creditable[] {
  const byId = new Map(creditable.map((c) => [c.line.id, c]));
  const unknown: FieldIssue[] = [];
  const taken: FieldIssue[] = [];
  itemIds.forEach((id, index) => {
    const found = byId.get(id);
    if (!found) unknown.push({ path: ['itemIds', index], message: 'is not a line of this invoice' });
    else if (found.left === 0)
      taken.push({ path: ['itemIds', index], message: 'this line has already been credited' });
  });
  if (unknown.length > 0) {
    throw new DomainError('INVALID_REFERENCE', 'The request names lines the invoice does not have', unknown);
  }
  if (taken.length > 0) {
    throw new DomainError('CONFLICT', 'The request names lines that have already been credited', taken);
  }
  return creditable.filter((c) => itemIds.includes(c.line.id));
}

function partLines(creditable: Creditable[], lines: CreditNoteLine[]): CreditLine[] {
  const byId = new Map(creditable.map((c) => [c.line.id, c]));
  const unknown: FieldIssue[] = [];
  const refused: FieldIssue[] = [];
  const result: CreditLine[] = [];
  lines.forEach((request, index) => {
    const found = byId.get(request.itemId);
    if (!found) {
      unknown.push({ path: ['lines', index, 'itemId'], message: 'is not a line of this invoice' });
      return;
    }
    const { line, left } = found;
    const field = request.quantity == null ? 'amount' : 'quantity';
    const path = ['lines', index, field];
    if (line.amount <= 0) {
      refused.push({ path, message: 'only lines with a positive amount can be credited in part' });
      return;
    }
    if (request.quantity != null && new Decimal(request.quantity).gt(line.quantity)) {
      refused.push({ path, message: `is more than the line's quantity (${line.quantity})` });
      return;
    }
    const fields =
      request.quantity == null
        ? byAmount(line, request.amount ?? 0, path)
        : byQuantity(line, request.quantity, path);
    if (fields.amount > left) {
      refused.push({
        path,
        message: `credits ${fields.amount}, but only ${left} of this line's ${line.amount} is left to credit`,
      });
      return;
    }
    result.push({ creditedItemId: line.id, fields });
  });
  if (unknown.length > 0) {
    throw new DomainError('INVALID_REFERENCE', 'The request names lines the invoice does not have', unknown);
  }
  if (refused.length > 0) {
    throw new DomainError('CONFLICT', 'The request credits more than is left of a line', refused);
  }
  return result;
}

/** `quantity` units of the line, priced as the line was, its fixed discount shared pro rata. */
function byQuantity(line: InvoiceItem, quantity: string, path: FieldPath): ItemFields {
  const share = new Decimal(quantity).dividedBy(line.quantity);
  const discountAmount = new Decimal(line.discountAmount).times(share).toDecimalPlaces(6).toFixed();
  return withAmounts({ ...copyOf(line), quantity, discountAmount }, path);
}

/** `amount` (net, minor units) of the line, taxed at its rate. */
function byAmount(line: InvoiceItem, amount: number, path: FieldPath): ItemFields {
  return withAmounts(
    {
      ...copyOf(line),
      quantity: '1',
      unitAmount: String(amount),
      discountPercentage: '0',
      discountAmount: '0',
    },
    path,
  );
}

function freeLine(line: CreditNoteFreeLine, index: number, rates: Map<string, string>): CreditLine {
  const taxCode = line.taxCode ?? null;
  const fields: ItemFields = {
    quantity: '1',
    unitAmount: String(line.amount),
    sku: null,
    title: line.title,
    description: null,
    periodStart: null,
    periodEnd: null,
    taxCode,
    taxRate: taxCode === null ? null : (rates.get(taxCode) ?? null),
    discountPercentage: '0',
    discountAmount: '0',
    taxBehavior: 'exclusive',
    amount: 0,
    taxAmount: 0,
  };
  return { creditedItemId: null, fields: withAmounts(fields, ['freeLines', index, 'amount']) };
}

function withAmounts(fields: ItemFields, path: FieldPath): ItemFields {
  try {
    // A part of a line is taxed on its own, as the line's behaviour (inclusive or not) says.
    const [amounts] = computeTaxedLines(
      [{ ...fields, taxRate: fields.taxRate ?? null, taxCode: fields.taxCode ?? null }],
      'line',
    );
    return { ...fields, ...amounts };
  } catch (error) {
    if (!(error instanceof InvoiceArithmeticError)) throw error;
    throw DomainError.onField('INVALID_INPUT', path, error.message);
  }
}
