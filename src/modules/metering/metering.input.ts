import { z } from 'zod';
import { boundedText } from '../../validation.ts';
import { AGGREGATIONS, ROUNDINGS } from './metering.entity.ts';

/** Events one request may carry. */
export const MAX_EVENTS_PER_BATCH = 1000;

/** A metric code: letters, digits and `_ . : -`, as events name it. */
export const MetricCode = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,100}$/, { error: 'must be 1 to 100 letters, digits or _ . : -' });

const PropertyName = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,100}$/, { error: 'must be 1 to 100 letters, digits or _ . : -' });

const Filters = z
  .record(PropertyName, z.string().max(250))
  .refine((filters) => Object.keys(filters).length <= 20, { error: 'must have at most 20 properties' });

const RoundingDecimals = z.number().int().min(0).max(6);

export const MetricCreateInput = z
  .strictObject({
    code: MetricCode,
    name: boundedText(1, 250),
    aggregation: z.enum(AGGREGATIONS),
    fieldName: PropertyName.nullish(),
    filters: Filters.nullish(),
    rounding: z.enum(ROUNDINGS).nullish(),
    roundingDecimals: RoundingDecimals.nullish(),
  })
  .refine((input) => input.aggregation === 'count' || input.fieldName != null, {
    path: ['fieldName'],
    error: 'is needed by every aggregation but count',
  });
export type MetricCreateInput = z.infer<typeof MetricCreateInput>;

/** What can change after creation; code, aggregation and field stay (billed periods keep their meaning). */
export const MetricUpdateInput = z.strictObject({
  name: boundedText(1, 250).optional(),
  filters: Filters.nullish(),
  rounding: z.enum(ROUNDINGS).optional(),
  roundingDecimals: RoundingDecimals.optional(),
});
export type MetricUpdateInput = z.infer<typeof MetricUpdateInput>;

/** One usage event as a client sends it; checked one by one so a bad event rejects only itself. */
export const UsageEventInput = z.strictObject({
  transactionId: boundedText(1, 255),
  customer: boundedText(1, 255),
  metric: z.string().min(1).max(100),
  timestamp: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time' }),
  properties: z.record(z.string().max(100), z.unknown()).nullish(),
});
export type UsageEventInput = z.infer<typeof UsageEventInput>;

/** A batch: its size is checked as a whole, each event on its own. */
export const UsageEventBatchInput = z.strictObject({
  events: z
    .array(z.unknown())
    .min(1, { error: 'must carry at least one event' })
    .max(MAX_EVENTS_PER_BATCH, { error: `must carry at most ${MAX_EVENTS_PER_BATCH} events` }),
});
