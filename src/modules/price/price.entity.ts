import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../../db/tenant-keys.ts';
import { TAX_BEHAVIORS } from '../tax/tax-policy.ts';
import type { Pricing } from './pricing.ts';

export const TERM_UNITS = ['day', 'week', 'month', 'year'] as const;
export const PURCHASES = ['one_time', 'recurring'] as const;
export const PRICE_MODELS = ['fee', 'volume', 'graduated', 'package'] as const;
export const BILLING_METHODS = ['advance', 'arrears', 'event_based'] as const;

export type TermUnit = (typeof TERM_UNITS)[number];
export type Purchase = (typeof PURCHASES)[number];
export type PriceModel = (typeof PRICE_MODELS)[number];
export type BillingMethod = (typeof BILLING_METHODS)[number];

/**
 * What a product costs, per currency, under one price model. `purchase` and `method` are fixed at
 * creation: subscriptions bill by them, so changing them would re-interpret periods already billed.
 */
export const PriceSchema = defineEntity({
  name: 'Price',
  tableName: 'price',
  properties: {
    ...tenantKeys(),
    name: p.string().length(250),
    description: p.string().length(4000).nullable(),
    termUnit: p.enum(TERM_UNITS),
    termCount: p.integer(),
    purchase: p.enum(PURCHASES),
    priceModel: p.enum(PRICE_MODELS),
    method: p.enum(BILLING_METHODS),
    /** Lowercase ISO 4217 code -> entry shaped by `priceModel` (see pricing.ts). */
    pricing: p.json<Pricing>(),
    /** Whether the amounts include tax; invoice lines billed from the price carry it. */
    taxBehavior: p.enum(TAX_BEHAVIORS).default('exclusive'),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().nullable(),
  },
});

export type Price = InferEntity<typeof PriceSchema>;
