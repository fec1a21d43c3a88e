import { Instant } from '../../dates/calendar.ts';
import type { Period } from '../../dates/periods.ts';
import { builder } from '../../graphql/builder.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import { LIST_BOUNDS, listCost } from '../../limits/query-cost.ts';
import { CustomerRef } from '../customer/customer.graphql.ts';
import { customerLoaders } from '../customer/customer.reads.ts';
import { BillingMethodEnum, PriceRef, PurchaseEnum, TermUnitEnum } from '../price/price.graphql.ts';
import { priceLoaders } from '../price/price.reads.ts';
import { ProductRef } from '../product/product.graphql.ts';
import { productLoaders } from '../product/product.reads.ts';
import { pendingPeriod } from './subscription.cycle.ts';
import {
  SUBSCRIPTION_STATUSES,
  type Subscription,
  type SubscriptionItem,
  type UsageRecord,
} from './subscription.entity.ts';
import {
  SubscriptionCreateInput,
  SubscriptionFilter,
  SubscriptionUpdateInput,
  UsageRecordInput,
} from './subscription.input.ts';
import { subscriptionLoaders } from './subscription.reads.ts';
import { SubscriptionService } from './subscription.service.ts';

export const SubscriptionStatusEnum = builder.enumType('SubscriptionStatus', {
  values: SUBSCRIPTION_STATUSES,
  description:
    'active; cancelled (periods under way at the cancellation are still billed); ended (nothing left to bill).',
});

const PeriodRef = builder.objectRef<Period>('SubscriptionPeriod').implement({
  description: 'A billing period: from start up to (not including) end, the day the next period starts.',
  fields: (t) => ({
    start: t.expose('start', { type: 'Date' }),
    end: t.expose('end', { type: 'Date' }),
  }),
});

const TermRef = builder.objectRef<Subscription>('SubscriptionTerm').implement({
  fields: (t) => ({
    start: t.expose('termStart', { type: 'Date' }),
    end: t.expose('termEnd', { type: 'Date', nullable: true, description: 'None: open-ended.' }),
  }),
});

export const SubscriptionItemRef = builder.objectRef<SubscriptionItem>('SubscriptionItem').implement({
  description: 'A product at a price. Periods are anchored at the subscription start, by the price term.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    product: t.field({
      type: ProductRef,
      resolve: async (item, _args, ctx) =>
        (await ctx.loaders.of(productLoaders).byId.load(item.productId)) as never,
    }),
    price: t.field({
      type: PriceRef,
      resolve: async (item, _args, ctx) =>
        (await ctx.loaders.of(priceLoaders).byId.load(item.priceId)) as never,
    }),
    quantity: t.float({
      description: 'Not used by event-based items, which bill the usage of each period.',
      resolve: (item) => Number(item.quantity),
    }),
    nextQuantity: t.float({
      nullable: true,
      description: 'A changed quantity that applies from nextQuantityFrom on.',
      resolve: (item) => (item.nextQuantity == null ? null : Number(item.nextQuantity)),
    }),
    nextQuantityFrom: t.expose('nextQuantityFrom', { type: 'Date', nullable: true }),
    termUnit: t.expose('termUnit', {
      type: TermUnitEnum,
      description: "The price's, when the item was added.",
    }),
    termCount: t.exposeInt('termCount'),
    purchase: t.expose('purchase', { type: PurchaseEnum }),
    method: t.expose('method', { type: BillingMethodEnum }),
    startsOn: t.expose('startsOn', { type: 'Date', description: 'The start of its first period.' }),
    endsOn: t.expose('endsOn', {
      type: 'Date',
      nullable: true,
      description: 'Removed: no period starting on or after this day is billed.',
    }),
    billAt: t.expose('billAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the next bill is due: the period start in advance, its end in arrears. None: done.',
    }),
    period: t.field({
      type: PeriodRef,
      nullable: true,
      description: 'The period the next bill covers.',
      resolve: async (item, _args, ctx) => {
        const subscription = await ctx.loaders.of(subscriptionLoaders).byId.load(item.subscriptionId);
        return subscription ? pendingPeriod(subscription, item) : null;
      },
    }),
  }),
});

export const SubscriptionRef = builder.objectRef<Subscription>('CustomerSubscription').implement({
  description:
    "A customer's subscription (named so that it cannot be taken for GraphQL's subscription root type).",
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    handle: t.exposeString('handle', { nullable: true, description: 'Unique within the environment.' }),
    customer: t.field({
      type: CustomerRef,
      resolve: async (subscription, _args, ctx) =>
        (await ctx.loaders.of(customerLoaders).byId.load(subscription.customerId)) as never,
    }),
    currency: t.exposeString('currency'),
    term: t.field({ type: TermRef, resolve: (subscription) => subscription }),
    autoRenewal: t.exposeBoolean('autoRenewal', {
      description: 'Renews a termed subscription at its term end, for another term as long as the first.',
    }),
    status: t.expose('status', { type: SubscriptionStatusEnum }),
    cancelledAt: t.expose('cancelledAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the cancellation takes effect.',
    }),
    items: t.field({
      type: [SubscriptionItemRef],
      description: 'Every item, including removed and finished ones.',
      complexity: listCost(LIST_BOUNDS.subscriptionItems),
      resolve: (subscription, _args, ctx) =>
        ctx.loaders.of(subscriptionLoaders).itemsBySubscriptionId.load(subscription.id),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', nullable: true }),
  }),
});

const UsageRecordRef = builder.objectRef<UsageRecord>('UsageRecord').implement({
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    subscriptionItemId: t.expose('subscriptionItemId', { type: 'UUID' }),
    quantity: t.float({ resolve: (record) => Number(record.quantity) }),
    timestamp: t.expose('occurredAt', { type: 'DateTime' }),
    idempotencyKey: t.exposeString('idempotencyKey'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const SubscriptionConnectionRef = builder.connectionObject(
  { type: SubscriptionRef, name: 'CustomerSubscriptionConnection' },
  { name: 'CustomerSubscriptionEdge' },
);

const SubscriptionItemInputRef = builder.inputType('SubscriptionItemInput', {
  fields: (t) => ({
    productId: t.field({ type: 'UUID', required: true }),
    priceId: t.field({
      type: 'UUID',
      required: true,
      description: "A price with pricing in the subscription's currency.",
    }),
    quantity: t.float({ description: 'Defaults to 1; at most 6 decimals.' }),
    metricCode: t.string({
      description:
        'For an event-based price: the code of the billable metric whose usage events the item bills. ' +
        'Without it an event-based item bills its usage records (usageRecord).',
    }),
  }),
});

const SubscriptionTermInputRef = builder.inputType('SubscriptionTermInput', {
  fields: (t) => ({
    start: t.field({ type: 'Date', required: true, description: 'Anchors every billing period.' }),
    end: t.field({ type: 'Date', description: 'Leave out for an open-ended subscription.' }),
  }),
});

const SubscriptionCreateInputRef = builder
  .inputType('SubscriptionCreateInput', {
    fields: (t) => ({
      customerId: t.field({ type: 'UUID', required: true }),
      currency: t.string({ description: "Defaults to the customer's currency." }),
      handle: t.string(),
      term: t.field({ type: SubscriptionTermInputRef, required: true }),
      autoRenewal: t.boolean({ description: 'Defaults to false; needs a term end.' }),
      items: t.field({ type: [SubscriptionItemInputRef], required: true }),
    }),
  })
  .validate(SubscriptionCreateInput);

const SubscriptionItemQuantityInputRef = builder.inputType('SubscriptionItemQuantityInput', {
  fields: (t) => ({
    id: t.field({ type: 'UUID', required: true }),
    quantity: t.float({ required: true }),
  }),
});

const SubscriptionUpdateInputRef = builder
  .inputType('SubscriptionUpdateInput', {
    description:
      'Changes apply from each item’s next period on: the first that starts at or after `at` and is not billed yet.',
    fields: (t) => ({
      autoRenewal: t.boolean(),
      items: t.field({ type: [SubscriptionItemQuantityInputRef], description: 'New quantities.' }),
      addItems: t.field({
        type: [SubscriptionItemInputRef],
        description: 'Items starting at their first period boundary at or after `at`.',
      }),
      removeItemIds: t.field({
        type: ['UUID'],
        description: 'Items to end: periods under way at `at` are still billed, later ones are not.',
      }),
      at: t.field({ type: 'DateTime', description: 'When the change is made; defaults to now.' }),
    }),
  })
  .validate(SubscriptionUpdateInput);

const SubscriptionFilterRef = builder
  .inputType('SubscriptionFilter', {
    fields: (t) => ({
      customerId: t.field({ type: 'UUID' }),
      status: t.field({ type: SubscriptionStatusEnum }),
    }),
  })
  .validate(SubscriptionFilter);

const SubscriptionCreatePayload = payloadType('SubscriptionCreatePayload', 'subscription', SubscriptionRef);
const SubscriptionUpdatePayload = payloadType('SubscriptionUpdatePayload', 'subscription', SubscriptionRef);
const SubscriptionCancelPayload = payloadType('SubscriptionCancelPayload', 'subscription', SubscriptionRef);
const UsageRecordPayload = payloadType('UsageRecordPayload', 'usageRecord', UsageRecordRef);

builder.queryFields((t) => ({
  subscription: t.field({
    type: SubscriptionRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (_root, { id }, ctx) => ctx.loaders.of(subscriptionLoaders).byId.load(id),
  }),
  subscriptions: t.connection(
    {
      type: SubscriptionRef,
      args: { filter: t.arg({ type: SubscriptionFilterRef }) },
      resolve: (_root, { filter, ...page }, ctx) => new SubscriptionService(ctx).list(filter ?? {}, page),
    },
    SubscriptionConnectionRef,
  ),
}));

builder.mutationFields((t) => ({
  subscriptionCreate: t.field({
    type: SubscriptionCreatePayload,
    args: { input: t.arg({ type: SubscriptionCreateInputRef, required: true }) },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('subscription', () => new SubscriptionService(ctx).create(input)),
  }),
  subscriptionUpdate: t.field({
    type: SubscriptionUpdatePayload,
    args: {
      id: t.arg({ type: 'UUID', required: true }),
      input: t.arg({ type: SubscriptionUpdateInputRef, required: true }),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('subscription', () => new SubscriptionService(ctx).update(id, input)),
  }),
  subscriptionCancel: t.field({
    type: SubscriptionCancelPayload,
    description:
      'Cancels from `at` (default now): periods under way then are still billed, later ones are not, and it no longer renews.',
    args: {
      id: t.arg({ type: 'UUID', required: true }),
      at: t.arg({ type: 'DateTime' }).validate(Instant.nullish()),
    },
    resolve: (_root, { id, at }, ctx) =>
      withUserErrors('subscription', () => new SubscriptionService(ctx).cancel(id, at ?? undefined)),
  }),
  usageRecord: t.field({
    type: UsageRecordPayload,
    description:
      'Records usage of an event-based item, billed in arrears with its period. The same idempotencyKey for the same item records once.',
    args: t.validate(
      {
        subscriptionItemId: t.arg({ type: 'UUID', required: true }),
        quantity: t.arg.float({ required: true, description: 'More than 0, at most 6 decimals.' }),
        timestamp: t.arg({
          type: 'DateTime',
          required: true,
          description: 'When the usage happened; its period must not be billed yet.',
        }),
        idempotencyKey: t.arg.string({ required: true, description: '1 to 255 visible ASCII characters.' }),
      },
      UsageRecordInput,
    ),
    resolve: (_root, args, ctx) =>
      withUserErrors('usageRecord', () => new SubscriptionService(ctx).recordUsage(args)),
  }),
}));
