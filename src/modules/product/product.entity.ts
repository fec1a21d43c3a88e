import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../../db/tenant-keys.ts';

export const ProductSchema = defineEntity({
  name: 'Product',
  tableName: 'product',
  uniques: [{ name: 'product_environment_handle_unique', properties: ['environmentId', 'handle'] }],
  properties: {
    ...tenantKeys(),
    name: p.string().length(250),
    /** Handle or SKU; an invoice item whose `sku` equals it takes its defaults from this product. */
    handle: p.string().length(250).nullable(),
    description: p.text().nullable(),
    /** `code` of a tax code of the same environment. */
    taxCode: p.string().length(64).nullable(),
    /** Keys of `PATCH /products` that are no product field (the contract allows any), kept as sent. */
    metadata: p.json<Record<string, unknown>>(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().nullable(),
  },
});

export type Product = InferEntity<typeof ProductSchema>;
