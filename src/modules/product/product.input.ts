import { z } from 'zod';
import { boundedText } from '../../validation.ts';

/** Every writable product field and its rules, declared once for both faces. */
const productFields = {
  name: boundedText(1, 250),
  handle: boundedText(1, 250).nullish(),
  description: boundedText(0, 4000).nullish(),
  taxCode: boundedText(1, 64).nullish(),
};

export const METADATA_LIMITS = { keys: 50, keyLength: 40, valueLength: 500 } as const;

const metadataValue = z
  .unknown()
  .refine((value) => (JSON.stringify(value)?.length ?? 0) <= METADATA_LIMITS.valueLength, {
    message: `must be at most ${METADATA_LIMITS.valueLength} characters as JSON`,
  });

/**
 * A change to a product's metadata: each key set to a JSON value (at most 500 characters as JSON), or
 * removed with null. Stripe's metadata limits.
 */
export const MetadataChange = z
  .record(z.string().min(1).max(METADATA_LIMITS.keyLength), metadataValue)
  .meta({ description: 'Metadata keys to set (any JSON value) or remove (null); at most 50 keys in all.' });
export type MetadataChange = z.infer<typeof MetadataChange>;

export const ProductCreateInput = z.strictObject({ ...productFields, metadata: MetadataChange.optional() });
export type ProductCreateInput = z.infer<typeof ProductCreateInput>;

/**
 * A partial update, also the body of `PATCH /products/{id}`: an absent field stays as it is, `null`
 * clears it. `name` can change but not be cleared.
 */
export const ProductUpdateInput = z.strictObject({
  ...productFields,
  name: productFields.name.optional(),
  metadata: MetadataChange.optional(),
});
export type ProductUpdateInput = z.infer<typeof ProductUpdateInput>;

/** The product fields of `PATCH /products/{id}`. */
export const PRODUCT_PATCH_FIELDS = Object.keys(productFields) as (keyof typeof productFields)[];

/**
 * Body of `PATCH /products/{id}`: the contract allows any keys. The product's own fields are
 * applied; every other key is a metadata change (null removes the key), read back through GraphQL.
 */
export const ProductPatchBody = z
  .object({ ...productFields, name: productFields.name.optional() })
  .catchall(metadataValue)
  .superRefine((body, ctx) => {
    for (const key of Object.keys(body)) {
      if (Object.hasOwn(productFields, key)) continue;
      if (key.length > METADATA_LIMITS.keyLength)
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `a metadata key has at most ${METADATA_LIMITS.keyLength} characters`,
        });
    }
  })
  .meta({
    description:
      'name, handle, description and taxCode update the product; any other key is kept in its metadata ' +
      '(null removes it; at most 50 keys, key 1-40 characters, value at most 500 characters as JSON).',
  });

/** Fields of the product response that clients may echo back; they are ignored as input. */
export const PRODUCT_READ_ONLY_FIELDS = ['id', 'createdAt', 'updatedAt'] as const;

/** A parsed PATCH body as a product update: the product's fields as they are, every other key a metadata change. */
export function productUpdateOf(body: z.infer<typeof ProductPatchBody>): ProductUpdateInput {
  const update: Record<string, unknown> = {};
  const metadata: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (Object.hasOwn(productFields, key)) update[key] = value;
    else metadata[key] = value;
  }
  return (Object.keys(metadata).length > 0 ? { ...update, metadata } : update) as ProductUpdateInput;
}
