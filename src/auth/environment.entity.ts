import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { newId } from '../db/ids.ts';

/** `live` bills real time only; `test` may bill moments ahead of now (simulated time). */
export const ENVIRONMENT_KINDS = ['live', 'test'] as const;
export type EnvironmentKind = (typeof ENVIRONMENT_KINDS)[number];

/**
 * How an environment rounds VAT (DESIGN §5): `document` once per rate group of an invoice (EN 16931
 * BR-CO-17), `line` on each line by itself.
 */
export const TAX_ROUNDINGS = ['document', 'line'] as const;
export type TaxRounding = (typeof TAX_ROUNDINGS)[number];

/** A tenant: every billing row belongs to exactly one environment. */
export const EnvironmentSchema = defineEntity({
  name: 'Environment',
  tableName: 'environment',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    name: p.string().length(200),
    kind: p.enum(ENVIRONMENT_KINDS).default('live'),
    taxRounding: p.enum(TAX_ROUNDINGS).default('document'),
    /** The IANA time zone new customers get when they name none. */
    timezone: p.string().columnType('text').default('UTC'),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type Environment = InferEntity<typeof EnvironmentSchema>;
