/**
 * The arithmetic of postings, without the database: what each money event debits and credits.
 * Amounts are signed minor units, debit positive; every function returns lines that sum to zero.
 */

export type PostingLine = {
  accountId: string;
  amount: number;
  accountSetId: string | null;
  invoiceItemId: string | null;
  taxCode: string | null;
};

/**
 * Where one invoice line goes: its revenue account (sales or deferral) and its set's tax account.
 * `recognized`, on a credit note line against a deferred line, is the part of the line's amount that
 * goes to the income account instead, because that much had been recognized.
 */
export type LineTarget = {
  accountSetId: string;
  revenueAccountId: string;
  taxAccountId: string;
  recognized?: { accountId: string; amount: number };
};

export type PostedItem = { id: string; amount: number; taxAmount: number; taxCode?: string | null };

const line = (accountId: string, amount: number, extra: Partial<PostingLine> = {}): PostingLine => ({
  accountId,
  amount,
  accountSetId: null,
  invoiceItemId: null,
  taxCode: null,
  ...extra,
});

/**
 * Booking: receivable is debited the total incl. VAT, each line's revenue account credited its net
 * amount, and each set's tax account credited the VAT per tax code. A credit note (`sign` −1) posts
 * the mirror image. Zero amounts post nothing.
 */
export function bookingLines(
  receivableAccountId: string,
  items: readonly PostedItem[],
  targetOf: (item: PostedItem) => LineTarget,
  sign: 1 | -1,
): PostingLine[] {
  const lines: PostingLine[] = [];
  const taxes = new Map<string, PostingLine>();
  let total = 0;
  for (const item of items) {
    const target = targetOf(item);
    total += item.amount + item.taxAmount;
    const recognized = target.recognized?.amount ?? 0;
    const extra = { accountSetId: target.accountSetId, invoiceItemId: item.id };
    lines.push(line(target.revenueAccountId, -sign * (item.amount - recognized), extra));
    if (target.recognized) lines.push(line(target.recognized.accountId, -sign * recognized, extra));
    if (item.taxAmount === 0) continue;
    const key = `${target.taxAccountId}\u0000${item.taxCode ?? ''}`;
    const tax =
      taxes.get(key) ??
      line(target.taxAccountId, 0, { accountSetId: target.accountSetId, taxCode: item.taxCode ?? null });
    tax.amount -= sign * item.taxAmount;
    taxes.set(key, tax);
  }
  return [line(receivableAccountId, sign * total), ...lines, ...taxes.values()].filter(
    (posting) => posting.amount !== 0,
  );
}

/**
 * A settlement of `amount` on an invoice (`direction` 1) or a credit note (−1): receivable falls by
 * what the invoice's amount due falls, the counterpart (cash, or the customer credit account) takes
 * the other side.
 */
export function settlementLines(
  receivableAccountId: string,
  counterpartAccountId: string,
  amount: number,
  direction: 1 | -1,
): PostingLine[] {
  if (amount === 0) return [];
  return [line(counterpartAccountId, direction * amount), line(receivableAccountId, -direction * amount)];
}

/** A refund out of the credit balance: customer credit debited, cash credited. */
export const refundLines = (customerCreditAccountId: string, cashAccountId: string, amount: number) =>
  amount === 0 ? [] : [line(customerCreditAccountId, amount), line(cashAccountId, -amount)];

/** The lines that cancel `lines` (a void cancels its invoice's booking). */
export const reversedLines = (lines: readonly PostingLine[]): PostingLine[] =>
  lines.map((posting) => ({ ...posting, amount: -posting.amount }));

/** True when the lines sum to zero, as every entry must. */
export const balances = (lines: readonly Pick<PostingLine, 'amount'>[]): boolean =>
  lines.reduce((sum, posting) => sum + posting.amount, 0) === 0;
