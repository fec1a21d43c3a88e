import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../../db/tenant-keys.ts';

export const AGGREGATIONS = ['count', 'sum', 'max', 'unique_count', 'latest', 'weighted_sum'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

export const ROUNDINGS = ['none', 'round', 'ceil', 'floor'] as const;
export type Rounding = (typeof ROUNDINGS)[number];

/** Event property name -> the string value an event must carry to count. */
export type MetricFilters = Record<string, string>;

/**
 * A billable metric: how the usage events named by `code` aggregate over a period into the quantity
 * an event-based item bills. `fieldName` is the event property read (any but `count`); `filters`
 * keep only events whose properties equal the given strings; the result is rounded by `rounding` to
 * `roundingDecimals` places.
 */
export const BillableMetricSchema = defineEntity({
  name: 'BillableMetric',
  tableName: 'billable_metric',
  uniques: [{ name: 'billable_metric_environment_code_unique', properties: ['environmentId', 'code'] }],
  properties: {
    ...tenantKeys(),
    code: p.string().length(100),
    name: p.string().length(250),
    aggregation: p.enum(AGGREGATIONS),
    fieldName: p.string().length(100).nullable(),
    filters: p.json<MetricFilters>(),
    rounding: p.enum(ROUNDINGS),
    roundingDecimals: p.integer(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().nullable(),
  },
});

export type BillableMetric = InferEntity<typeof BillableMetricSchema>;

export const LATE_EVENT_POLICIES = ['adjust_next', 'reject'] as const;
export type LateEventPolicy = (typeof LATE_EVENT_POLICIES)[number];

/**
 * An environment's metering rules: what becomes of an event for a period already billed
 * (`adjust_next`: an adjustment line on the item's next invoice; `reject`), and how many hours after
 * its end an event-based period waits before it is billed, so late events still count.
 */
export const MeteringSettingsSchema = defineEntity({
  name: 'MeteringSettings',
  tableName: 'metering_settings',
  properties: {
    ...tenantKeys(),
    lateEvents: p.enum(LATE_EVENT_POLICIES),
    gracePeriodHours: p.integer(),
    updatedAt: p.datetime().nullable(),
  },
});

export type MeteringSettings = InferEntity<typeof MeteringSettingsSchema>;

/**
 * A billed period of a metered item that late events changed: pending until the item's next bill
 * re-aggregates the period and invoices the difference (then `invoiceId`, `quantity`, `amount`).
 */
export const UsageAdjustmentSchema = defineEntity({
  name: 'UsageAdjustment',
  tableName: 'usage_adjustment',
  properties: {
    ...tenantKeys(),
    subscriptionItemId: p.uuid(),
    periodStart: p.date(),
    periodEnd: p.date(),
    invoiceId: p.uuid().nullable(),
    quantity: p.decimal('string').precision(21).scale(6).nullable(),
    amount: p.bigint('number').nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    billedAt: p.datetime().nullable(),
  },
});

export type UsageAdjustment = InferEntity<typeof UsageAdjustmentSchema>;

export const THRESHOLD_KINDS = ['usage', 'amount'] as const;
export type ThresholdKind = (typeof THRESHOLD_KINDS)[number];

/**
 * A usage threshold on a metered subscription item: when the item's quantity (`usage`) or the amount
 * its price gives for it (`amount`, minor units) reaches `value` within a period, ingestion emits
 * `usage_threshold.crossed`, once per period (the row of `usage_threshold_crossing` is the once).
 */
export const UsageThresholdSchema = defineEntity({
  name: 'UsageThreshold',
  tableName: 'usage_threshold',
  properties: {
    ...tenantKeys(),
    subscriptionItemId: p.uuid(),
    kind: p.enum(THRESHOLD_KINDS),
    value: p.decimal('string').precision(21).scale(6),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type UsageThreshold = InferEntity<typeof UsageThresholdSchema>;
