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
