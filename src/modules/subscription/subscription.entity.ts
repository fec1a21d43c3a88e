import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../../db/tenant-keys.ts';
import { BILLING_METHODS, PURCHASES, TERM_UNITS } from '../price/price.entity.ts';

export const SUBSCRIPTION_STATUSES = ['active', 'cancelled', 'ended'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const RENEWAL_UNITS = ['day', 'month'] as const;

/**
 * A customer's subscription. `startDate` anchors every period boundary of its items; `termStart` and
 * `termEnd` are the current term (no end: open-ended), which a billing run renews by `renewalUnit` x
 * `renewalCount` (the first term's length) when `autoRenewal` is on.
 */
export const SubscriptionSchema = defineEntity({
  name: 'Subscription',
  tableName: 'subscription',
  uniques: [{ name: 'subscription_environment_handle_unique', properties: ['environmentId', 'handle'] }],
  properties: {
    ...tenantKeys(),
    customerId: p.uuid(),
    handle: p.string().length(250).nullable(),
    currency: p.string().length(3),
    startDate: p.date(),
    /** The day the trial ends (the period anchor `startDate` then); null: no trial. */
    trialEnd: p.date().nullable(),
    /** The day renewal terms are counted from when it is not `startDate` (a trial or a billing anchor). */
    renewalAnchor: p.date().nullable(),
    /** The customer's time zone when the subscription was created: its period dates are local to it. */
    timezone: p.string().columnType('text').default('UTC'),
    termStart: p.date(),
    termEnd: p.date().nullable(),
    renewalUnit: p.enum(RENEWAL_UNITS).nullable(),
    renewalCount: p.integer().nullable(),
    autoRenewal: p.boolean(),
    status: p.enum(SUBSCRIPTION_STATUSES),
    /** When the cancellation takes effect: no period of any item starts at or after it. */
    cancelledAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().nullable(),
  },
});

export type Subscription = InferEntity<typeof SubscriptionSchema>;

/**
 * A product at a price, in some quantity. The price's term, purchase and method are copied when the
 * item is added, so periods keep their meaning whatever later happens to the price; its pricing is
 * read when a period is billed. `periodIndex` is the period the next bill covers, `billAt` when that
 * bill is due (null: nothing left to bill).
 */
export const SubscriptionItemSchema = defineEntity({
  name: 'SubscriptionItem',
  tableName: 'subscription_item',
  properties: {
    ...tenantKeys(),
    subscriptionId: p.uuid(),
    productId: p.uuid(),
    priceId: p.uuid(),
    /** The billable metric an event-based item bills; none: it bills its usage records. */
    billableMetricId: p.uuid().nullable(),
    quantity: p.decimal('string').precision(21).scale(6),
    termUnit: p.enum(TERM_UNITS),
    termCount: p.integer(),
    purchase: p.enum(PURCHASES),
    method: p.enum(BILLING_METHODS),
    startsOn: p.date(),
    /** Removed from this period boundary on (exclusive): periods starting then or later are not billed. */
    endsOn: p.date().nullable(),
    periodIndex: p.integer(),
    billAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().nullable(),
  },
});

export type SubscriptionItem = InferEntity<typeof SubscriptionItemSchema>;

export const PRORATION_BEHAVIORS = ['create', 'none', 'invoice_now'] as const;
export type ProrationBehavior = (typeof PRORATION_BEHAVIORS)[number];

export const SUBSCRIPTION_CHANGE_STATUSES = ['scheduled', 'cancelled'] as const;

/**
 * A change of an item's quantity or price (a null field keeps what it was). It is made on the local
 * day `effectiveOn`; whole periods starting on or after `appliesFrom` (a period boundary) bill it, and
 * the days from `effectiveOn` to `appliesFrom` are prorated unless `proration` is `none`. Changes apply
 * in order of `appliesFrom`, then of their ids (creation order); several may wait at once.
 */
export const SubscriptionChangeSchema = defineEntity({
  name: 'SubscriptionChange',
  tableName: 'subscription_change',
  properties: {
    ...tenantKeys(),
    subscriptionId: p.uuid(),
    subscriptionItemId: p.uuid(),
    effectiveOn: p.date(),
    appliesFrom: p.date(),
    quantity: p.decimal('string').precision(21).scale(6).nullable(),
    priceId: p.uuid().nullable(),
    /** The item's removal (or its subscription's cancellation): no period from `appliesFrom` on is billed. */
    removes: p.boolean().default(false),
    proration: p.enum(PRORATION_BEHAVIORS),
    status: p.enum(SUBSCRIPTION_CHANGE_STATUSES),
    createdAt: p.datetime().onCreate(() => new Date()),
    cancelledAt: p.datetime().nullable(),
  },
});

export type SubscriptionChange = InferEntity<typeof SubscriptionChangeSchema>;

export const PRORATION_KINDS = ['unused', 'remaining', 'trial'] as const;

/**
 * A prorated charge (`remaining` time at the new figures) or credit (`unused` time at the old ones,
 * a negative amount) that a mid-period change made, waiting for an invoice from `billFrom` on; or the
 * zero line naming an item's trial (`trial`), waiting for the item's first invoice.
 */
export const ProrationLineSchema = defineEntity({
  name: 'ProrationLine',
  tableName: 'proration_line',
  properties: {
    ...tenantKeys(),
    customerId: p.uuid(),
    subscriptionId: p.uuid(),
    subscriptionItemId: p.uuid(),
    changeId: p.uuid().nullable(),
    kind: p.enum(PRORATION_KINDS),
    currency: p.string().length(3),
    productId: p.uuid(),
    priceId: p.uuid(),
    quantity: p.decimal('string').precision(21).scale(6),
    amount: p.bigint('number'),
    description: p.string().columnType('text'),
    periodStart: p.date(),
    periodEnd: p.date(),
    billFrom: p.datetime(),
    invoiceId: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type ProrationLine = InferEntity<typeof ProrationLineSchema>;

/** Usage of an `event_based` item, summed per period and billed in arrears. */
export const UsageRecordSchema = defineEntity({
  name: 'UsageRecord',
  tableName: 'usage_record',
  properties: {
    ...tenantKeys(),
    subscriptionItemId: p.uuid(),
    quantity: p.decimal('string').precision(21).scale(6),
    occurredAt: p.datetime(),
    idempotencyKey: p.string().length(255),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type UsageRecord = InferEntity<typeof UsageRecordSchema>;
