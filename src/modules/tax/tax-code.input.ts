import { z } from 'zod';
import { Decimal } from '../../money/decimal.ts';
import { boundedText } from '../../validation.ts';

const RATE_DECIMALS = 4;

/** A percentage (25 = 25 %) from 0 to 100 with at most 4 decimals, kept as an exact decimal string. */
const TaxRate = z
  .number()
  .min(0, { error: 'must be a percentage from 0 to 100' })
  .max(100, { error: 'must be a percentage from 0 to 100' })
  .refine((rate) => new Decimal(rate).decimalPlaces() <= RATE_DECIMALS, {
    error: `must have at most ${RATE_DECIMALS} decimal places`,
  })
  .transform((rate) => new Decimal(rate).toFixed());

const taxCodeFields = {
  code: boundedText(1, 64),
  rate: TaxRate,
  description: boundedText(0, 500).nullish(),
};

export const TaxCodeCreateInput = z.strictObject(taxCodeFields);
export type TaxCodeCreateInput = z.infer<typeof TaxCodeCreateInput>;

/**
 * A partial update (absent stays, null clears the description). The code cannot change: products
 * and invoice items refer to a tax code by its code.
 */
export const TaxCodeUpdateInput = z.strictObject({
  rate: taxCodeFields.rate.optional(),
  description: taxCodeFields.description,
});
export type TaxCodeUpdateInput = z.infer<typeof TaxCodeUpdateInput>;
