import { z } from 'zod';
import { CalendarDate, Instant, LAST_DATE } from '../../dates/calendar.ts';
import { CurrencyCode } from '../../money/currency.ts';
import { boundedText } from '../../validation.ts';
import { exactDecimal } from '../invoice/invoice.input.ts';
import { PRORATION_BEHAVIORS, SUBSCRIPTION_STATUSES } from './subscription.entity.ts';

/** Most items one request may name. */
export const MAX_ITEMS_PER_SUBSCRIPTION_REQUEST = 100;

/** A quantity: an exact decimal of at most 6 places, as the invoice lines it ends up on take it. */
const Quantity = z.number().nonnegative({ error: 'must not be negative' }).pipe(exactDecimal(6));

export const SubscriptionItemInput = z.strictObject({
  productId: z.uuid(),
  priceId: z.uuid(),
  /** 1 when left out; for event-based items the usage of each period is billed instead. */
  quantity: Quantity.nullish(),
  /** For an item at an event-based price: the code of the billable metric it bills. */
  metricCode: z.string().min(1).max(100).nullish(),
});
export type SubscriptionItemInput = z.infer<typeof SubscriptionItemInput>;

const Items = z.array(SubscriptionItemInput).max(MAX_ITEMS_PER_SUBSCRIPTION_REQUEST);

const Term = z
  .strictObject({ start: CalendarDate, end: CalendarDate.nullish() })
  .refine((term) => !term.end || term.end > term.start, { path: ['end'], error: 'must be after start' })
  .refine((term) => !term.end || term.end <= LAST_DATE, {
    path: ['end'],
    error: 'must be in year 9999 at the latest',
  });

/** A new subscription: `currency` falls back to the customer's; a term without `end` never ends by itself. */
export const SubscriptionCreateInput = z
  .strictObject({
    customerId: z.uuid(),
    currency: CurrencyCode.nullish(),
    handle: boundedText(1, 250).nullish(),
    term: Term,
    /** Periods are counted from this day; the days from the start to it are a prorated first period. */
    billingAnchor: CalendarDate.nullish(),
    /** The trial ends (and the first period starts) on this day: nothing is charged before it. */
    trialEnd: CalendarDate.nullish(),
    autoRenewal: z.boolean().nullish(),
    items: Items.min(1, { error: 'must list at least one item' }),
  })
  .refine((input) => !input.autoRenewal || Boolean(input.term.end), {
    path: ['autoRenewal'],
    error: 'needs a term end: only a termed subscription renews',
  });
export type SubscriptionCreateInput = z.infer<typeof SubscriptionCreateInput>;

const distinct = (ids: string[]) => new Set(ids).size === ids.length;

/**
 * Changes from each item's next period on. Fields left out (or null) stay as they are; `at` is the
 * moment the change is made (now when left out).
 */
export const SubscriptionUpdateInput = z.strictObject({
  autoRenewal: z.boolean().nullish(),
  items: z
    .array(
      z
        .strictObject({ id: z.uuid(), quantity: Quantity.nullish(), priceId: z.uuid().nullish() })
        .refine((item) => item.quantity != null || item.priceId != null, {
          error: 'must change the quantity, the price or both',
        }),
    )
    .max(MAX_ITEMS_PER_SUBSCRIPTION_REQUEST)
    .refine((items) => distinct(items.map((item) => item.id)), { error: 'must not name an item twice' })
    .nullish(),
  addItems: Items.nullish(),
  removeItemIds: z
    .array(z.uuid())
    .max(MAX_ITEMS_PER_SUBSCRIPTION_REQUEST)
    .refine(distinct, { error: 'must not name an item twice' })
    .nullish(),
  at: Instant.nullish(),
  /** How the days from `at` to the end of the period under way are billed; `create` when left out. */
  proration: z.enum(PRORATION_BEHAVIORS).nullish(),
});
export type SubscriptionUpdateInput = z.infer<typeof SubscriptionUpdateInput>;

export const SubscriptionFilter = z.strictObject({
  customerId: z.uuid().nullish(),
  status: z.enum(SUBSCRIPTION_STATUSES).nullish(),
});
export type SubscriptionFilter = z.infer<typeof SubscriptionFilter>;

/** Usage of an event-based item; the same `idempotencyKey` for the same item records once. */
export const UsageRecordInput = z.strictObject({
  subscriptionItemId: z.uuid(),
  quantity: z.number().positive({ error: 'must be more than 0' }).pipe(exactDecimal(6)),
  timestamp: Instant,
  idempotencyKey: z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, { error: 'must be 1 to 255 visible ASCII characters' }),
});
export type UsageRecordInput = z.infer<typeof UsageRecordInput>;
