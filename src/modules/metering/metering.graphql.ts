import { DomainError } from '../../errors.ts';
import { builder } from '../../graphql/builder.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import { SubscriptionItemRef } from '../subscription/subscription.graphql.ts';
import {
  type BatchResult,
  EVENT_STATUSES,
  type EventResult,
  REJECTION_REASONS,
  UsageIngestService,
} from './ingest.service.ts';
import {
  AGGREGATIONS,
  type BillableMetric,
  BillableMetricSchema,
  LATE_EVENT_POLICIES,
  type MeteringSettings,
  ROUNDINGS,
  THRESHOLD_KINDS,
  type UsageThreshold,
} from './metering.entity.ts';
import { MAX_EVENTS_PER_BATCH, MetricCreateInput, MetricUpdateInput } from './metering.input.ts';
import { MeteringSettingsService, MeteringSettingsUpdateInput } from './metering-settings.service.ts';
import { MetricService } from './metric.service.ts';
import { UsageThresholdService } from './threshold.service.ts';
import { type ItemUsage, UsageService } from './usage.service.ts';

const AggregationEnum = builder.enumType('BillableMetricAggregation', {
  values: AGGREGATIONS,
  description:
    'count: events; sum / max: of the property; unique_count: distinct values of the property in the period; ' +
    'latest: the value of the period’s last event; weighted_sum: each event adds its value to a level ' +
    '(carried over from earlier periods), averaged over the period by how long each level held.',
});

const RoundingEnum = builder.enumType('BillableMetricRounding', {
  values: ROUNDINGS,
  description: 'How the aggregated value is rounded to roundingDecimals places (none: kept to 6 decimals).',
});

export const BillableMetricRef = builder.objectRef<BillableMetric>('BillableMetric').implement({
  description: 'How usage events named by `code` aggregate over a period into the quantity an item bills.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    code: t.exposeString('code', { description: 'Unique within the environment; events name it as metric.' }),
    name: t.exposeString('name'),
    aggregation: t.expose('aggregation', { type: AggregationEnum }),
    fieldName: t.exposeString('fieldName', {
      nullable: true,
      description: 'The event property read (every aggregation but count needs one).',
    }),
    filters: t.expose('filters', {
      type: 'JSONObject',
      description: 'Only events whose properties equal these string values count ({} : every event).',
    }),
    rounding: t.expose('rounding', { type: RoundingEnum }),
    roundingDecimals: t.exposeInt('roundingDecimals'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', nullable: true }),
  }),
});

const MetricCreateInputRef = builder
  .inputType('BillableMetricCreateInput', {
    fields: (t) => ({
      code: t.string({ required: true, description: 'Letters, digits and _ . : - (at most 100).' }),
      name: t.string({ required: true }),
      aggregation: t.field({ type: AggregationEnum, required: true }),
      fieldName: t.string({ description: 'The event property to read; needed by all but count.' }),
      filters: t.field({
        type: 'JSONObject',
        description: 'Property name -> string value events must carry.',
      }),
      rounding: t.field({ type: RoundingEnum, description: 'none when left out.' }),
      roundingDecimals: t.int({ description: '0 to 6; 0 when left out.' }),
    }),
  })
  .validate(MetricCreateInput);

const MetricUpdateInputRef = builder
  .inputType('BillableMetricUpdateInput', {
    description:
      'Fields left out stay as they are; null filters clear them. Code, aggregation and field are fixed at creation.',
    fields: (t) => ({
      name: t.string(),
      filters: t.field({ type: 'JSONObject' }),
      rounding: t.field({ type: RoundingEnum }),
      roundingDecimals: t.int(),
    }),
  })
  .validate(MetricUpdateInput);

const MetricCreatePayload = payloadType('BillableMetricCreatePayload', 'billableMetric', BillableMetricRef);
const MetricUpdatePayload = payloadType('BillableMetricUpdatePayload', 'billableMetric', BillableMetricRef);

const EventStatusEnum = builder.enumType('UsageEventStatus', {
  values: EVENT_STATUSES,
  description:
    'accepted: stored; duplicate: its transactionId was taken before (nothing stored); rejected: see reason.',
});
const RejectionReasonEnum = builder.enumType('UsageEventRejection', { values: REJECTION_REASONS });

const EventResultRef = builder.objectRef<EventResult>('UsageEventResult').implement({
  fields: (t) => ({
    transactionId: t.exposeString('transactionId', { nullable: true }),
    status: t.expose('status', { type: EventStatusEnum }),
    reason: t.expose('reason', { type: RejectionReasonEnum, nullable: true }),
    message: t.exposeString('message', { nullable: true }),
  }),
});

const BatchResultRef = builder.objectRef<BatchResult>('UsageEventBatchResult').implement({
  fields: (t) => ({
    accepted: t.exposeInt('accepted'),
    duplicates: t.exposeInt('duplicates'),
    rejected: t.exposeInt('rejected'),
    results: t.field({
      type: [EventResultRef],
      description: 'One per event, in the order sent.',
      resolve: (batch) => batch.results,
    }),
  }),
});

const UsageEventInputRef = builder.inputType('UsageEventInput', {
  fields: (t) => ({
    transactionId: t.string({
      required: true,
      description: 'Unique within the environment for ever: sending it again is answered duplicate.',
    }),
    customer: t.string({ required: true, description: 'The customer’s id or handle.' }),
    metric: t.string({ required: true, description: 'The billable metric’s code.' }),
    timestamp: t.field({
      type: 'DateTime',
      required: true,
      description: 'When the usage happened; at most 24 hours ahead of the server clock.',
    }),
    properties: t.field({ type: 'JSONObject' }),
  }),
});

const IngestPayload = payloadType('UsageEventsIngestPayload', 'batch', BatchResultRef);

const ItemUsageRef = builder.objectRef<ItemUsage>('SubscriptionItemUsage').implement({
  description: 'An event-based item’s usage over one period so far, and what it would bill.',
  fields: (t) => ({
    subscriptionItem: t.field({ type: SubscriptionItemRef, resolve: (usage) => usage.item }),
    metric: t.field({ type: BillableMetricRef, nullable: true, resolve: (usage) => usage.metric }),
    periodStart: t.field({ type: 'Date', resolve: (usage) => usage.period.start }),
    periodEnd: t.field({ type: 'Date', description: 'Exclusive.', resolve: (usage) => usage.period.end }),
    quantity: t.float({ resolve: (usage) => Number(usage.quantity) }),
    amount: t.field({
      type: 'SafeInt',
      description: 'Minor units, by the item’s price, before tax, as the billing run would bill it.',
      resolve: (usage) => usage.amount,
    }),
    currency: t.exposeString('currency'),
    billed: t.exposeBoolean('billed', { description: 'Whether the period was billed already.' }),
  }),
});

const LateEventsEnum = builder.enumType('LateEventPolicy', {
  values: LATE_EVENT_POLICIES,
  description:
    'What becomes of a usage event for a period already billed: adjust_next bills the difference on the ' +
    'item’s next invoice; reject answers it rejected (period_billed).',
});

const MeteringSettingsRef = builder.objectRef<MeteringSettings>('MeteringSettings').implement({
  fields: (t) => ({
    lateEvents: t.expose('lateEvents', { type: LateEventsEnum }),
    gracePeriodHours: t.exposeInt('gracePeriodHours', {
      description:
        'Hours after its end an event-based period waits before a billing run bills it (0 to 720).',
    }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', nullable: true }),
  }),
});

const MeteringSettingsUpdateInputRef = builder
  .inputType('MeteringSettingsUpdateInput', {
    description: 'Settings left out stay as they are.',
    fields: (t) => ({
      lateEvents: t.field({ type: LateEventsEnum }),
      gracePeriodHours: t.int(),
    }),
  })
  .validate(MeteringSettingsUpdateInput);

const MeteringSettingsUpdatePayload = payloadType(
  'MeteringSettingsUpdatePayload',
  'meteringSettings',
  MeteringSettingsRef,
);

builder.objectField(SubscriptionItemRef, 'metric', (t) =>
  t.field({
    type: BillableMetricRef,
    nullable: true,
    description: 'The billable metric an event-based item bills; none: it bills its usage records.',
    resolve: (item, _args, ctx) =>
      item.billableMetricId
        ? ctx.em.findOne(BillableMetricSchema, {
            id: item.billableMetricId,
            environmentId: ctx.environmentId,
          })
        : null,
  }),
);

const ThresholdKindEnum = builder.enumType('UsageThresholdKind', {
  values: THRESHOLD_KINDS,
  description:
    'usage: the item’s quantity (the metric aggregated over the period); amount: what its price gives for ' +
    'that quantity, in minor units before tax.',
});

const UsageThresholdRef = builder.objectRef<UsageThreshold>('UsageThreshold').implement({
  description:
    'When a metered item’s usage or amount reaches `value` within one of its periods, ingestion emits a ' +
    '`usage_threshold.crossed` event, once per period.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    subscriptionItemId: t.expose('subscriptionItemId', { type: 'UUID' }),
    kind: t.expose('kind', { type: ThresholdKindEnum }),
    value: t.float({ resolve: (threshold) => Number(threshold.value) }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const UsageThresholdCreateInputRef = builder.inputType('UsageThresholdCreateInput', {
  fields: (t) => ({
    subscriptionItemId: t.field({
      type: 'UUID',
      required: true,
      description: 'An event-based item that bills a metric.',
    }),
    kind: t.field({ type: ThresholdKindEnum, required: true }),
    value: t.float({
      required: true,
      description:
        'Above 0: a quantity (usage) or whole minor units of the subscription’s currency (amount).',
    }),
  }),
});

const UsageThresholdCreatePayload = payloadType(
  'UsageThresholdCreatePayload',
  'usageThreshold',
  UsageThresholdRef,
);

builder.objectField(SubscriptionItemRef, 'usageThresholds', (t) =>
  t.field({
    type: [UsageThresholdRef],
    description: 'The usage thresholds set on this item (event-based items that bill a metric).',
    resolve: (item, _args, ctx) => new UsageThresholdService(ctx).list(item.id),
  }),
);

builder.queryFields((t) => ({
  meteringSettings: t.field({
    type: MeteringSettingsRef,
    description: 'This environment’s metering settings (the defaults until changed).',
    resolve: (_root, _args, ctx) => new MeteringSettingsService(ctx).get(),
  }),
  billableMetric: t.field({
    type: BillableMetricRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (_root, { id }, ctx) =>
      ctx.em.findOne(BillableMetricSchema, { id, environmentId: ctx.environmentId }),
  }),
  billableMetrics: t.connection(
    {
      type: BillableMetricRef,
      resolve: (_root, args, ctx) => new MetricService(ctx).list(args),
    },
    { name: 'BillableMetricConnection' },
    { name: 'BillableMetricEdge' },
  ),
  subscriptionItemUsage: t.field({
    type: ItemUsageRef,
    nullable: true,
    description:
      'The usage of an event-based item over its period that contains `at` (now when left out): the open ' +
      'period so far, or a past one, with the amount its price gives for it. Null for an unknown item.',
    args: {
      subscriptionItemId: t.arg({ type: 'UUID', required: true }),
      at: t.arg({ type: 'DateTime' }),
    },
    resolve: (_root, { subscriptionItemId, at }, ctx) =>
      new UsageService(ctx).itemUsage(subscriptionItemId, at ?? undefined).catch((error: unknown) => {
        if (error instanceof DomainError && error.code === 'NOT_FOUND') return null;
        throw error;
      }),
  }),
}));

builder.mutationFields((t) => ({
  meteringSettingsUpdate: t.field({
    type: MeteringSettingsUpdatePayload,
    args: { input: t.arg({ type: MeteringSettingsUpdateInputRef, required: true }) },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('meteringSettings', () => new MeteringSettingsService(ctx).update(input)),
  }),
  usageThresholdCreate: t.field({
    type: UsageThresholdCreatePayload,
    description:
      'Sets a usage or amount threshold on a metered item: reaching it in a period emits ' +
      'usage_threshold.crossed once for that period.',
    args: { input: t.arg({ type: UsageThresholdCreateInputRef, required: true }) },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('usageThreshold', () => new UsageThresholdService(ctx).create(input)),
  }),
  billableMetricCreate: t.field({
    type: MetricCreatePayload,
    args: { input: t.arg({ type: MetricCreateInputRef, required: true }) },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('billableMetric', () => new MetricService(ctx).create(input)),
  }),
  billableMetricUpdate: t.field({
    type: MetricUpdatePayload,
    args: {
      id: t.arg({ type: 'UUID', required: true }),
      input: t.arg({ type: MetricUpdateInputRef, required: true }),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('billableMetric', () => new MetricService(ctx).update(id, input)),
  }),
  usageEventsIngest: t.field({
    type: IngestPayload,
    description:
      `Takes up to ${MAX_EVENTS_PER_BATCH} usage events; each is answered accepted, duplicate or rejected ` +
      'with its reason, so one bad event never refuses the others. Same as POST /events.',
    args: { events: t.arg({ type: [UsageEventInputRef], required: true }) },
    resolve: (_root, { events }, ctx) =>
      withUserErrors('batch', () =>
        new UsageIngestService(ctx).ingest({
          events: events.map((event) => ({
            ...event,
            timestamp: event.timestamp.toISOString(),
            properties: event.properties ?? undefined,
          })),
        }),
      ),
  }),
}));
