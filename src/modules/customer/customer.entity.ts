import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../../db/tenant-keys.ts';
import type { TaxId } from '../tax/tax-id.ts';
import { TAX_EXEMPTIONS } from '../tax/tax-policy.ts';

export const COLLECTION_MODES = ['automatic', 'send_invoice', 'draft_invoice'] as const;
export type CollectionMode = (typeof COLLECTION_MODES)[number];

export const BILLING_ADDRESS_FIELDS = [
  'street1',
  'street2',
  'postalCode',
  'city',
  'county',
  'country',
  'state',
] as const;
export type BillingAddress = Record<(typeof BILLING_ADDRESS_FIELDS)[number], string | null>;

export const CustomerSchema = defineEntity({
  name: 'Customer',
  tableName: 'customer',
  uniques: [{ name: 'customer_environment_handle_unique', properties: ['environmentId', 'handle'] }],
  indexes: [{ name: 'customer_environment_id_index', properties: ['environmentId', 'id'] }],
  properties: {
    ...tenantKeys(),
    name: p.string().length(250),
    companyName: p.string().length(250).nullable(),
    handle: p.string().length(250).nullable(),
    email: p.string().length(320).nullable(),
    currency: p.string().length(3).nullable(),
    paymentTerm: p.string().length(20).nullable(),
    collectionMode: p.enum(COLLECTION_MODES),
    billingAddress: p.json<BillingAddress>(),
    taxIds: p.json<TaxId[]>().onCreate(() => []),
    taxExempt: p.enum(TAX_EXEMPTIONS).default('none'),
    /** IANA time zone its subscriptions' periods begin at local midnight of. */
    timezone: p.string().columnType('text').default('UTC'),
    /** The test clock whose time the customer lives on (test environments, set at creation only). */
    testClockId: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().nullable(),
  },
});

export type Customer = InferEntity<typeof CustomerSchema>;
