import { Decimal } from './decimal.ts';

/**
 * Splits `total` whole minor units over `shares` (exact amounts in minor units, usually fractions
 * of a total that sum to about it) so the parts sum to `total` exactly (DESIGN §5): each share
 * rounded toward negative infinity, then the units left over one each to the shares with the
 * largest fractional parts, ties to the earlier share.
 *
 * A negative total (a credit note, a refund) is allocated as the mirror image of its positive:
 * allocate(−T, −shares) = −allocate(T, shares). A credit note's lines then carry exactly the negated
 * figures of the invoice lines they reverse; read literally for negative numbers, the rule would
 * give the leftover unit of a tie to a different line than the invoice did. A zero total follows
 * the positive rule.
 *
 * The shares need not sum to the total exactly (a rate group's VAT is its shares' sum rounded), but
 * the rule must be able to reach it: a total from 0 up lies between the sum of the shares rounded
 * down and that plus one unit per share (a negative total likewise between the sum rounded up and
 * that minus one unit per share). Anything else, a non-finite share or a part beyond the safe
 * integers, is a RangeError: a caller's bug, never a user's input.
 */
export function allocate(total: number, shares: readonly Decimal[]): number[] {
  if (!Number.isSafeInteger(total)) throw new RangeError(`total ${total} is not a safe integer`);
  if (!shares.every((share) => share.isFinite())) throw new RangeError('shares must be finite numbers');
  if (total < 0) {
    return allocate(
      -total,
      shares.map((share) => share.negated()),
    ).map((part) => 0 - part);
  }
  const floors = shares.map((share) => share.floor());
  const leftover = floors.reduce((sum, floor) => sum.minus(floor), new Decimal(total));
  if (leftover.isNeg() || leftover.gt(shares.length)) {
    throw new RangeError(`shares summing to ${Decimal.sum(0, ...shares).toFixed()} cannot make up ${total}`);
  }
  const byFraction = shares
    .map((share, index) => ({ index, fraction: share.minus(floors[index] as Decimal) }))
    .sort((a, b) => b.fraction.comparedTo(a.fraction) || a.index - b.index);
  const parts = [...floors];
  for (const { index } of byFraction.slice(0, leftover.toNumber()))
    parts[index] = (parts[index] as Decimal).plus(1);
  return parts.map((part) => {
    if (part.abs().gt(Number.MAX_SAFE_INTEGER))
      throw new RangeError(`part ${part.toFixed()} is not a safe integer`);
    // + 0 turns the -0 of a share like -0.2 rounded up into 0.
    return part.toNumber() + 0;
  });
}
