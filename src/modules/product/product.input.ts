import { z } from 'zod';
import { boundedText } from '../../validation.ts';

/** Every writable product field and its rules, declared once for both faces. */
const productFields = {
  name: boundedText(1, 250),
  handle: boundedText(1, 250).nullish(),
  description: boundedText(0, 4000).nullish(),
  taxCode: boundedText(1, 64).nullish(),
};

export const ProductCreateInput = z.strictObject(productFields);
export type ProductCreateInput = z.infer<typeof ProductCreateInput>;

/**
 * A partial update, also the body of `PATCH /products/{id}`: an absent field stays as it is, `null`
 * clears it. `name` can change but not be cleared.
 */
export const ProductUpdateInput = z.strictObject({
  ...productFields,
  name: productFields.name.optional(),
});
export type ProductUpdateInput = z.infer<typeof ProductUpdateInput>;

/** Fields of the product response that clients may echo back; they are ignored as input. */
export const PRODUCT_READ_ONLY_FIELDS = ['id', 'createdAt', 'updatedAt'] as const;
