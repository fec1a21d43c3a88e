import { DomainError } from '../../errors.ts';
import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
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
  values: describedValues(AGGREGATIONS, {
    count: 'The number of matching events.',
    sum: 'The sum of the property over the period’s events.',
    max: 'The largest value of the property in the period.',
    unique_count: 'How many distinct values the property took in the period.',
    latest: 'The property’s value on the period’s last event.',
    weighted_sum: 'A level each event adds to, averaged over the period by how long each level held.',
  }),
  description:
    'count: events; sum / max: of the property; unique_count: distinct values of the property in the period; ' +
    'latest: the value of the period’s last event; weighted_sum: each event adds its value to a level ' +
    '(carried over from earlier periods), averaged over the period by how long each level held.',
});

const RoundingEnum = builder.enumType('BillableMetricRounding', {
  values: describedValues(ROUNDINGS, {
    none: 'Not rounded (kept to 6 decimals).',
    round: 'Rounded half away from zero to roundingDecimals places.',
    floor: 'Rounded down to roundingDecimals places.',
    ceil: 'Rounded up to roundingDecimals places.',
  }),
  description: 'How the aggregated value is rounded to roundingDecimals places (none: kept to 6 decimals).',
});

export const BillableMetricRef = builder.objectRef<BillableMetric>('BillableMetric').implement({
  description: 'How usage events named by `code` aggregate over a period into the quantity an item bills.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'The metric’s id.' }),
    code: t.exposeString('code', { description: 'Unique within the environment; events name it as metric.' }),
    name: t.exposeString('name', { description: 'A name for people, e.g. on invoices.' }),
    aggregation: t.expose('aggregation', {
      type: AggregationEnum,
      description: 'How the period’s events become one quantity.',
    }),
    fieldName: t.exposeString('fieldName', {
      nullable: true,
      description: 'The event property read (every aggregation but count needs one).',
    }),
    filters: t.expose('filters', {
      type: 'JSONObject',
      description: 'Only events whose properties equal these string values count ({} : every event).',
    }),
    rounding: t.expose('rounding', { type: RoundingEnum, description: 'How the quantity is rounded.' }),
    roundingDecimals: t.exposeInt('roundingDecimals', {
      description: 'Decimal places the quantity is rounded to (0 to 6).',
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it last changed (ISO 8601, UTC); null if never.',
    }),
  }),
});

const MetricCreateInputRef = builder
  .inputType('BillableMetricCreateInput', {
    description: 'A new billable metric. Code, aggregation and field cannot change later.',
    fields: (t) => ({
      code: t.string({ required: true, description: 'Letters, digits and _ . : - (at most 100).' }),
      name: t.string({ required: true, description: 'A name for people (1 to 250 characters).' }),
      aggregation: t.field({
        type: AggregationEnum,
        required: true,
        description: 'How the period’s events become one quantity.',
      }),
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
      name: t.string({ description: 'A new name for people.' }),
      filters: t.field({
        type: 'JSONObject',
        description: 'Property name -> string value events must carry; null clears them.',
      }),
      rounding: t.field({ type: RoundingEnum, description: 'A new rounding mode.' }),
      roundingDecimals: t.int({ description: 'New decimal places, 0 to 6.' }),
    }),
  })
  .validate(MetricUpdateInput);

const MetricCreatePayload = payloadType('BillableMetricCreatePayload', 'billableMetric', BillableMetricRef);
const MetricUpdatePayload = payloadType('BillableMetricUpdatePayload', 'billableMetric', BillableMetricRef);

const EventStatusEnum = builder.enumType('UsageEventStatus', {
  values: describedValues(EVENT_STATUSES, {
    accepted: 'Stored; it counts toward its period’s usage.',
    duplicate: 'Its transactionId was stored before; nothing was stored this time.',
    rejected: 'Not stored; `reason` and `message` say why.',
  }),
  description:
    'accepted: stored; duplicate: its transactionId was taken before (nothing stored); rejected: see reason.',
});
const RejectionReasonEnum = builder.enumType('UsageEventRejection', {
  description: 'Why a usage event was not stored.',
  values: describedValues(REJECTION_REASONS, {
    invalid:
      'The event is malformed (a missing field, a timestamp before 2000, a property of the wrong type).',
    unknown_customer: 'No customer of this environment has this id or handle.',
    unknown_metric: 'No billable metric of this environment has this code.',
    timestamp_in_future: 'The timestamp is more than 24 hours ahead of the server clock.',
    property_missing: 'The metric reads a property the event does not carry.',
    property_not_a_number: 'The metric needs a number and the property is not one.',
    period_billed: 'The event falls in a period billed already and late events are rejected.',
  }),
});

const EventResultRef = builder.objectRef<EventResult>('UsageEventResult').implement({
  description: 'What became of one event of a batch.',
  fields: (t) => ({
    transactionId: t.exposeString('transactionId', {
      nullable: true,
      description: 'The event’s transactionId; null when the event did not carry one.',
    }),
    status: t.expose('status', { type: EventStatusEnum, description: 'Stored, duplicate or rejected.' }),
    reason: t.expose('reason', {
      type: RejectionReasonEnum,
      nullable: true,
      description: 'Why it was rejected; null unless rejected.',
    }),
    message: t.exposeString('message', {
      nullable: true,
      description: 'The rejection in English, for a developer; null unless rejected.',
    }),
  }),
});

const BatchResultRef = builder.objectRef<BatchResult>('UsageEventBatchResult').implement({
  description: 'What became of a batch of usage events: counts and one result per event.',
  fields: (t) => ({
    accepted: t.exposeInt('accepted', { description: 'Events stored.' }),
    duplicates: t.exposeInt('duplicates', { description: 'Events whose transactionId was stored before.' }),
    rejected: t.exposeInt('rejected', { description: 'Events refused (see each result’s reason).' }),
    results: t.field({
      type: [EventResultRef],
      description: 'One per event, in the order sent.',
      resolve: (batch) => batch.results,
    }),
  }),
});

const UsageEventInputRef = builder.inputType('UsageEventInput', {
  description: 'One usage event: something a customer used, at a time, for a billable metric.',
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
    properties: t.field({
      type: 'JSONObject',
      description: 'Values the metric reads and filters on (strings or numbers); {} when left out.',
    }),
  }),
});

const IngestPayload = payloadType('UsageEventsIngestPayload', 'batch', BatchResultRef);

const ItemUsageRef = builder.objectRef<ItemUsage>('SubscriptionItemUsage').implement({
  description: 'An event-based item’s usage over one period so far, and what it would bill.',
  fields: (t) => ({
    subscriptionItem: t.field({
      type: SubscriptionItemRef,
      description: 'The item the usage is of.',
      resolve: (usage) => usage.item,
    }),
    metric: t.field({
      type: BillableMetricRef,
      nullable: true,
      description: 'The metric the item bills; null for an item billed by usage records.',
      resolve: (usage) => usage.metric,
    }),
    periodStart: t.field({
      type: 'Date',
      description: 'First day of the period (ISO 8601 date).',
      resolve: (usage) => usage.period.start,
    }),
    periodEnd: t.field({ type: 'Date', description: 'Exclusive.', resolve: (usage) => usage.period.end }),
    quantity: t.float({
      description: 'The usage over the period so far: the quantity the billing run would bill.',
      resolve: (usage) => Number(usage.quantity),
    }),
    amount: t.field({
      type: 'SafeInt',
      description: 'Minor units, by the item’s price, before tax, as the billing run would bill it.',
      resolve: (usage) => usage.amount,
    }),
    currency: t.exposeString('currency', { description: 'ISO 4217 code of `amount`.' }),
    billed: t.exposeBoolean('billed', { description: 'Whether the period was billed already.' }),
  }),
});

const LateEventsEnum = builder.enumType('LateEventPolicy', {
  values: describedValues(LATE_EVENT_POLICIES, {
    adjust_next: 'Store it and bill the difference on the item’s next invoice.',
    reject: 'Refuse it as period_billed.',
  }),
  description:
    'What becomes of a usage event for a period already billed: adjust_next bills the difference on the ' +
    'item’s next invoice; reject answers it rejected (period_billed).',
});

const MeteringSettingsRef = builder.objectRef<MeteringSettings>('MeteringSettings').implement({
  description: 'How this environment treats late usage events and when metered periods are billed.',
  fields: (t) => ({
    lateEvents: t.expose('lateEvents', {
      type: LateEventsEnum,
      description: 'What becomes of events for a period billed already.',
    }),
    gracePeriodHours: t.exposeInt('gracePeriodHours', {
      description:
        'Hours after its end an event-based period waits before a billing run bills it (0 to 720).',
    }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the settings last changed (ISO 8601, UTC); null while they are the defaults.',
    }),
  }),
});

const MeteringSettingsUpdateInputRef = builder
  .inputType('MeteringSettingsUpdateInput', {
    description: 'Settings left out stay as they are.',
    fields: (t) => ({
      lateEvents: t.field({ type: LateEventsEnum, description: 'What becomes of late events.' }),
      gracePeriodHours: t.int({
        description: 'Hours a period waits after its end before it is billed (0 to 720).',
      }),
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
  values: describedValues(THRESHOLD_KINDS, {
    usage: 'The item’s quantity in the period.',
    amount: 'What the price gives for that quantity, in minor units before tax.',
  }),
  description:
    'usage: the item’s quantity (the metric aggregated over the period); amount: what its price gives for ' +
    'that quantity, in minor units before tax.',
});

const UsageThresholdRef = builder.objectRef<UsageThreshold>('UsageThreshold').implement({
  description:
    'When a metered item’s usage or amount reaches `value` within one of its periods, ingestion emits a ' +
    '`usage_threshold.crossed` event, once per period.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'The threshold’s id.' }),
    subscriptionItemId: t.expose('subscriptionItemId', { type: 'UUID', description: 'The item it watches.' }),
    kind: t.expose('kind', {
      type: ThresholdKindEnum,
      description: 'Whether `value` is a quantity or an amount.',
    }),
    value: t.float({
      description: 'A quantity (usage) or minor units of the subscription’s currency (amount).',
      resolve: (threshold) => Number(threshold.value),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was set (ISO 8601, UTC).' }),
  }),
});

const UsageThresholdCreateInputRef = builder.inputType('UsageThresholdCreateInput', {
  description: 'A new usage threshold on a metered item.',
  fields: (t) => ({
    subscriptionItemId: t.field({
      type: 'UUID',
      required: true,
      description: 'An event-based item that bills a metric.',
    }),
    kind: t.field({
      type: ThresholdKindEnum,
      required: true,
      description: 'Whether `value` is a quantity or an amount.',
    }),
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
    description: 'The billable metric with this id; null when this environment has none.',
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The metric’s id.' }) },
    resolve: (_root, { id }, ctx) =>
      ctx.em.findOne(BillableMetricSchema, { id, environmentId: ctx.environmentId }),
  }),
  billableMetrics: t.connection(
    {
      type: BillableMetricRef,
      description: 'The billable metrics of this environment.',
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
      subscriptionItemId: t.arg({ type: 'UUID', required: true, description: 'The event-based item.' }),
      at: t.arg({
        type: 'DateTime',
        description: 'A moment in the period wanted (ISO 8601); now when left out.',
      }),
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
    description: 'Changes this environment’s metering settings.',
    args: {
      input: t.arg({
        type: MeteringSettingsUpdateInputRef,
        required: true,
        description: 'The settings to change.',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('meteringSettings', () => new MeteringSettingsService(ctx).update(input)),
  }),
  usageThresholdCreate: t.field({
    type: UsageThresholdCreatePayload,
    description:
      'Sets a usage or amount threshold on a metered item: reaching it in a period emits ' +
      'usage_threshold.crossed once for that period.',
    args: {
      input: t.arg({
        type: UsageThresholdCreateInputRef,
        required: true,
        description: 'The threshold to set.',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('usageThreshold', () => new UsageThresholdService(ctx).create(input)),
  }),
  billableMetricCreate: t.field({
    type: MetricCreatePayload,
    description: 'Creates a billable metric.',
    args: { input: t.arg({ type: MetricCreateInputRef, required: true, description: 'The new metric.' }) },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('billableMetric', () => new MetricService(ctx).create(input)),
  }),
  billableMetricUpdate: t.field({
    type: MetricUpdatePayload,
    description: 'Changes a billable metric’s name, filters or rounding.',
    args: {
      id: t.arg({ type: 'UUID', required: true, description: 'The metric’s id.' }),
      input: t.arg({ type: MetricUpdateInputRef, required: true, description: 'The fields to change.' }),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('billableMetric', () => new MetricService(ctx).update(id, input)),
  }),
  usageEventsIngest: t.field({
    type: IngestPayload,
    description:
      `Takes up to ${MAX_EVENTS_PER_BATCH} usage events; each is answered accepted, duplicate or rejected ` +
      'with its reason, so one bad event never refuses the others. Same as POST /events.',
    args: {
      events: t.arg({
        type: [UsageEventInputRef],
        required: true,
        description: `The events, 1 to ${MAX_EVENTS_PER_BATCH}.`,
      }),
    },
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
