import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../../db/tenant-keys.ts';

/** A tax code of an environment: products and invoice items name it by `code`. */
export const TaxCodeSchema = defineEntity({
  name: 'TaxCode',
  tableName: 'tax_code',
  uniques: [{ name: 'tax_code_environment_code_unique', properties: ['environmentId', 'code'] }],
  properties: {
    ...tenantKeys(),
    code: p.string().length(64),
    /** Percentage as an exact decimal string: "25" is 25 %, "7.5" is 7.5 %. */
    rate: p.decimal('string').precision(7).scale(4),
    description: p.string().length(500).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().nullable(),
  },
});

export type TaxCode = InferEntity<typeof TaxCodeSchema>;
