import type { RequestContext } from '../../context.ts';
import { Instant } from '../../dates/calendar.ts';
import type { Period } from '../../dates/periods.ts';
import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { NodeRef, nodeType } from '../../graphql/node.ts';
import { payloadType, type UserError, UserErrorRef, withUserErrors } from '../../graphql/user-errors.ts';
import { LIST_BOUNDS, listCost } from '../../limits/query-cost.ts';
import { CustomerRef } from '../customer/customer.graphql.ts';
import { customerLoaders } from '../customer/customer.reads.ts';
import { BillingMethodEnum, PriceRef, PurchaseEnum, TermUnitEnum } from '../price/price.graphql.ts';
import { priceLoaders } from '../price/price.reads.ts';
import { ProductRef } from '../product/product.graphql.ts';
import { productLoaders } from '../product/product.reads.ts';
import { changesOf, currentState, type ItemState, itemPeriod, pendingPeriod } from './subscription.cycle.ts';
import {
  PRORATION_BEHAVIORS,
  SUBSCRIPTION_STATUSES,
  type Subscription,
  type SubscriptionChange,
  type SubscriptionItem,
  type UsageRecord,
} from './subscription.entity.ts';
import {
  SubscriptionCreateInput,
  SubscriptionFilter,
  SubscriptionUpdateInput,
  UsageRecordInput,
} from './subscription.input.ts';
import type { ProrationDraft } from './subscription.proration.ts';
import { subscriptionLoaders } from './subscription.reads.ts';
import { SubscriptionService } from './subscription.service.ts';

export const SubscriptionStatusEnum = builder.enumType('SubscriptionStatus', {
  values: describedValues(SUBSCRIPTION_STATUSES, {
    active: 'Running: its periods are billed and it renews as set.',
    cancelled: 'Cancelled: periods under way at the cancellation are still billed, no later one.',
    ended: 'Over: nothing is left to bill.',
  }),
  description:
    'active; cancelled (periods under way at the cancellation are still billed); ended (nothing left to bill).',
});

const PeriodRef = builder.objectRef<Period>('SubscriptionPeriod').implement({
  description: 'A billing period: from start up to (not including) end, the day the next period starts.',
  fields: (t) => ({
    start: t.expose('start', { type: 'Date', description: 'First day of the period (ISO 8601 date).' }),
    end: t.expose('end', {
      type: 'Date',
      description: 'First day after the period (ISO 8601 date, exclusive): the next period’s start.',
    }),
  }),
});

const TermRef = builder.objectRef<Subscription>('SubscriptionTerm').implement({
  description: 'The subscription’s term: the day it starts and, when it has one, the day it ends.',
  fields: (t) => ({
    start: t.expose('termStart', { type: 'Date', description: 'First day of the term (ISO 8601 date).' }),
    end: t.expose('termEnd', { type: 'Date', nullable: true, description: 'None: open-ended.' }),
  }),
});

/** The item's quantity and price for its pending period. */
async function itemState(item: SubscriptionItem, ctx: RequestContext): Promise<ItemState> {
  const reads = ctx.loaders.of(subscriptionLoaders);
  const [subscription, changes] = await Promise.all([
    reads.byId.load(item.subscriptionId),
    reads.changesBySubscriptionId.load(item.subscriptionId),
  ]);
  return subscription
    ? currentState(subscription, item, changes)
    : { quantity: item.quantity, priceId: item.priceId };
}

/** The item's changes that no billed period has used yet: those applying from its pending period on. */
async function waiting(item: SubscriptionItem, ctx: RequestContext): Promise<SubscriptionChange[]> {
  const reads = ctx.loaders.of(subscriptionLoaders);
  const [subscription, changes] = await Promise.all([
    reads.byId.load(item.subscriptionId),
    reads.changesBySubscriptionId.load(item.subscriptionId),
  ]);
  // An item that ends has no pending period, but its removal waits from its next period's start on.
  const period = subscription ? itemPeriod(subscription, item, item.periodIndex) : null;
  if (!period) return [];
  return changesOf(item, changes).filter((change) => change.appliesFrom >= period.start);
}

/** The waiting changes that apply after the pending period: what nextQuantity shows. */
async function ahead(item: SubscriptionItem, ctx: RequestContext): Promise<SubscriptionChange[]> {
  const subscription = await ctx.loaders.of(subscriptionLoaders).byId.load(item.subscriptionId);
  const period = subscription ? pendingPeriod(subscription, item) : null;
  return (await waiting(item, ctx)).filter((change) => period && change.appliesFrom > period.start);
}

export const ProrationBehaviorEnum = builder.enumType('ProrationBehavior', {
  values: describedValues(PRORATION_BEHAVIORS, {
    create: 'Proration lines are made and go on the customer’s next invoice.',
    none: 'No proration: the period under way runs out at its old figures.',
    invoice_now: 'Proration lines are made and invoiced at once.',
  }),
  description:
    'How the days from a change to the end of the period under way are billed: create (proration lines go on the next invoice), none (the period runs out as it was), invoice_now (the proration lines are invoiced at once).',
});

const ScheduledChangeRef = builder.objectRef<SubscriptionChange>('SubscriptionScheduledChange').implement({
  description:
    'A change of an item (its quantity, price, or its removal): whole periods from appliesFrom on bill it; the days from effectiveOn to appliesFrom are prorated unless proration is none.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    effectiveOn: t.expose('effectiveOn', {
      type: 'Date',
      description: 'The local day the change was made for.',
    }),
    appliesFrom: t.expose('appliesFrom', {
      type: 'Date',
      description: 'The first period start that bills it whole.',
    }),
    quantity: t.float({
      nullable: true,
      description: 'None: the quantity stays.',
      resolve: (change) => (change.quantity == null ? null : Number(change.quantity)),
    }),
    priceId: t.expose('priceId', { type: 'UUID', nullable: true, description: 'None: the price stays.' }),
    removes: t.exposeBoolean('removes', {
      description:
        'The removal of the item (or the cancellation of its subscription): no period from appliesFrom on is billed. Cancelling it keeps the item (and the subscription) going.',
    }),
    proration: t.expose('proration', {
      type: ProrationBehaviorEnum,
      description: 'How the days from the change to the end of the period under way are billed.',
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
  }),
});

export const ProrationLineRef = builder
  .objectRef<ProrationDraft & { invoiceId?: string | null }>('ProrationLine')
  .implement({
    description:
      'A prorated credit (unused time at the old figures, negative) or charge (remaining time at the new ones) for the days from a change to the end of the period under way.',
    fields: (t) => ({
      kind: t.exposeString('kind', {
        description: 'unused, remaining, or trial (the zero line naming a trial on the first invoice).',
      }),
      subscriptionItemId: t.expose('subscriptionItemId', {
        type: 'UUID',
        description: 'The subscription item’s id.',
      }),
      productId: t.expose('productId', { type: 'UUID', description: 'The product’s id.' }),
      priceId: t.expose('priceId', { type: 'UUID', description: 'The price’s id.' }),
      description: t.exposeString('description', { description: 'The line text as it goes on the invoice.' }),
      quantity: t.float({
        resolve: (line) => Number(line.quantity),
        description: 'The quantity the line prices.',
      }),
      amount: t.exposeInt('amount', { description: 'Minor units; negative for a credit.' }),
      periodStart: t.expose('periodStart', {
        type: 'Date',
        description: 'First day the line covers (ISO 8601 date).',
      }),
      periodEnd: t.expose('periodEnd', { type: 'Date', description: 'The first day not covered.' }),
      invoiceId: t.field({
        type: 'UUID',
        nullable: true,
        description: 'The invoice that bills it; none while it waits for the next one.',
        resolve: (line) => line.invoiceId ?? null,
      }),
    }),
  });

export const SubscriptionItemRef = builder.objectRef<SubscriptionItem>('SubscriptionItem').implement({
  description: 'A product at a price. Periods are anchored at the subscription start, by the price term.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    product: t.field({
      description: 'The product the item bills.',
      type: ProductRef,
      resolve: async (item, _args, ctx) =>
        (await ctx.loaders.of(productLoaders).byId.load(item.productId)) as never,
    }),
    price: t.field({
      type: PriceRef,
      description: 'The price of the pending period (after the changes that apply to it).',
      resolve: async (item, _args, ctx) => {
        const state = await itemState(item, ctx);
        return (await ctx.loaders.of(priceLoaders).byId.load(state.priceId)) as never;
      },
    }),
    quantity: t.float({
      description:
        'The quantity of the pending period (after the changes that apply to it). Not used by event-based items, which bill the usage of each period.',
      resolve: async (item, _args, ctx) => Number((await itemState(item, ctx)).quantity),
    }),
    nextQuantity: t.float({
      nullable: true,
      description: 'The first scheduled quantity change still ahead: it applies from nextQuantityFrom on.',
      resolve: async (item, _args, ctx) => {
        const next = (await ahead(item, ctx)).find((change) => change.quantity != null);
        return next?.quantity == null ? null : Number(next.quantity);
      },
    }),
    nextQuantityFrom: t.field({
      description: 'The day nextQuantity applies from (ISO 8601 date); null without a quantity change ahead.',
      type: 'Date',
      nullable: true,
      resolve: async (item, _args, ctx) =>
        (await ahead(item, ctx)).find((change) => change.quantity != null)?.appliesFrom ?? null,
    }),
    scheduledChanges: t.field({
      type: [ScheduledChangeRef],
      description:
        'Changes no billed period has used yet, in the order they apply; each can be cancelled (subscriptionScheduledChangeCancel), the latest first.',
      resolve: (item, _args, ctx) => waiting(item, ctx),
    }),
    termUnit: t.expose('termUnit', {
      type: TermUnitEnum,
      description: "The price's, when the item was added.",
    }),
    termCount: t.exposeInt('termCount', { description: 'How many termUnits one period lasts.' }),
    purchase: t.expose('purchase', {
      type: PurchaseEnum,
      description: 'Whether the item bills once or every period.',
    }),
    method: t.expose('method', {
      type: BillingMethodEnum,
      description: 'When the item bills: ahead of a period, after it, or by its usage.',
    }),
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
  interfaces: [NodeRef],
  description:
    "A customer's subscription (named so that it cannot be taken for GraphQL's subscription root type).",
  fields: (t) => ({
    id: t.exposeID('id', { description: 'A UUID; the same id in REST.' }),
    handle: t.exposeString('handle', { nullable: true, description: 'Unique within the environment.' }),
    customer: t.field({
      description: 'The customer subscribed.',
      type: CustomerRef,
      resolve: async (subscription, _args, ctx) =>
        (await ctx.loaders.of(customerLoaders).byId.load(subscription.customerId)) as never,
    }),
    currency: t.exposeString('currency', { description: 'ISO 4217 currency code, e.g. EUR.' }),
    term: t.field({
      type: TermRef,
      resolve: (subscription) => subscription,
      description: 'When the subscription starts and ends.',
    }),
    billingAnchor: t.expose('startDate', {
      type: 'Date',
      description:
        'The day every period boundary is counted from: the start, or the billing anchor asked for.',
    }),
    trialEnd: t.expose('trialEnd', {
      type: 'Date',
      nullable: true,
      description: 'The day the trial ends and the first period starts; nothing is charged before it.',
    }),
    autoRenewal: t.exposeBoolean('autoRenewal', {
      description: 'Renews a termed subscription at its term end, for another term as long as the first.',
    }),
    status: t.expose('status', {
      type: SubscriptionStatusEnum,
      description: 'Whether it is active, cancelled or ended.',
    }),
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
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it last changed (ISO 8601, UTC); null if it never changed.',
    }),
  }),
});

const UsageRecordRef = builder.objectRef<UsageRecord>('UsageRecord').implement({
  description: 'A quantity of usage recorded for an item billed by usage records (no metric).',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    subscriptionItemId: t.expose('subscriptionItemId', {
      type: 'UUID',
      description: 'The subscription item’s id.',
    }),
    quantity: t.float({ resolve: (record) => Number(record.quantity), description: 'The quantity used.' }),
    timestamp: t.expose('occurredAt', {
      type: 'DateTime',
      description: 'When the usage happened (ISO 8601, UTC).',
    }),
    idempotencyKey: t.exposeString('idempotencyKey', {
      description: 'The key that makes recording it again answer this record instead of a second one.',
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
  }),
});

const SubscriptionConnectionRef = builder.connectionObject(
  { type: SubscriptionRef, name: 'CustomerSubscriptionConnection' },
  { name: 'CustomerSubscriptionEdge' },
);

const SubscriptionItemInputRef = builder.inputType('SubscriptionItemInput', {
  description: 'A product at a price to subscribe to.',
  fields: (t) => ({
    productId: t.field({ type: 'UUID', required: true, description: 'The product’s id.' }),
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
  description: 'When a new subscription starts and, optionally, ends.',
  fields: (t) => ({
    start: t.field({ type: 'Date', required: true, description: 'Anchors every billing period.' }),
    end: t.field({ type: 'Date', description: 'Leave out for an open-ended subscription.' }),
  }),
});

const SubscriptionCreateInputRef = builder
  .inputType('SubscriptionCreateInput', {
    description: 'A new subscription of a customer, with its items.',
    fields: (t) => ({
      customerId: t.field({ type: 'UUID', required: true, description: 'The customer’s id.' }),
      currency: t.string({ description: "Defaults to the customer's currency." }),
      handle: t.string({
        description: 'A unique handle within the environment, for lookups; none when left out.',
      }),
      term: t.field({
        type: SubscriptionTermInputRef,
        required: true,
        description: 'When it starts and ends.',
      }),
      billingAnchor: t.field({
        type: 'Date',
        description:
          'Periods run from this day (within the first period of every item, before any term end); the days from the start to it are billed as a prorated first period. Renewals still count terms from the start. Defaults to the start.',
      }),
      trialEnd: t.field({
        type: 'Date',
        description:
          'A trial up to this day (after the start, before any term end): nothing is charged before it, periods are anchored at it, and the first invoice names the trial in a zero line.',
      }),
      autoRenewal: t.boolean({ description: 'Defaults to false; needs a term end.' }),
      items: t.field({
        type: [SubscriptionItemInputRef],
        required: true,
        description: 'The products and prices to subscribe to; at least one.',
      }),
    }),
  })
  .validate(SubscriptionCreateInput);

const SubscriptionItemQuantityInputRef = builder.inputType('SubscriptionItemQuantityInput', {
  description: 'A new quantity, a new price (same term, purchase and method as the item), or both.',
  fields: (t) => ({
    id: t.field({ type: 'UUID', required: true, description: 'The subscription item’s id.' }),
    quantity: t.float({ description: 'The new quantity (at most 6 decimals); left out: unchanged.' }),
    priceId: t.field({ type: 'UUID', description: 'An upgrade or downgrade to another price.' }),
  }),
});

const SubscriptionUpdateInputRef = builder
  .inputType('SubscriptionUpdateInput', {
    description:
      'Changes apply from each item’s next period on: the first that starts at or after `at` and is not billed yet.',
    fields: (t) => ({
      autoRenewal: t.boolean({
        description: 'Whether it renews at the end of its term; left out: unchanged.',
      }),
      items: t.field({ type: [SubscriptionItemQuantityInputRef], description: 'New quantities and prices.' }),
      addItems: t.field({
        type: [SubscriptionItemInputRef],
        description: 'Items starting at their first period boundary at or after `at`.',
      }),
      removeItemIds: t.field({
        type: ['UUID'],
        description: 'Items to end: periods under way at `at` are still billed, later ones are not.',
      }),
      at: t.field({ type: 'DateTime', description: 'When the change is made; defaults to now.' }),
      proration: t.field({
        type: ProrationBehaviorEnum,
        description:
          'Defaults to create: the days from `at` to the end of the period under way are prorated.',
      }),
    }),
  })
  .validate(SubscriptionUpdateInput);

const SubscriptionFilterRef = builder
  .inputType('SubscriptionFilter', {
    description: 'Narrows the subscriptions listed; every field given must match.',
    fields: (t) => ({
      customerId: t.field({ type: 'UUID', description: 'Only this customer’s subscriptions.' }),
      status: t.field({ type: SubscriptionStatusEnum, description: 'Only subscriptions in this status.' }),
    }),
  })
  .validate(SubscriptionFilter);

const SubscriptionCreatePayload = payloadType('SubscriptionCreatePayload', 'subscription', SubscriptionRef);
type ChangePayload = {
  subscription: Subscription | null;
  prorationLines: (ProrationDraft & { invoiceId?: string | null })[];
  userErrors: UserError[];
};

/** `{ subscription, prorationLines, userErrors }`: what a change made, or (previewed) would make. */
const changePayload = (name: string) =>
  builder.objectRef<ChangePayload>(name).implement({
    description:
      'What a subscription change made (or, previewed, would make): the subscription, its proration lines, or the userErrors that refused it.',
    fields: (t) => ({
      subscription: t.field({
        type: SubscriptionRef,
        nullable: true,
        description: 'As it is now: after the change, or unchanged for a preview.',
        resolve: (payload) => payload.subscription,
      }),
      prorationLines: t.field({
        type: [ProrationLineRef],
        description: 'The proration lines the change made (or, previewed, would make).',
        resolve: (payload) => payload.prorationLines,
      }),
      userErrors: t.field({
        type: [UserErrorRef],
        description: 'Why the mutation changed nothing; empty when it succeeded.',
        resolve: (payload) => payload.userErrors,
      }),
    }),
  });

const SubscriptionUpdatePayload = changePayload('SubscriptionUpdatePayload');
const SubscriptionCancelPayload = changePayload('SubscriptionCancelPayload');
const ScheduledChangeCancelPayload = changePayload('SubscriptionScheduledChangeCancelPayload');

/** Runs a change; a preview answers the subscription as it is, with the lines the change would make. */
async function changeOutcome(
  ctx: RequestContext,
  id: string,
  preview: boolean,
  run: () => Promise<{ subscription: Subscription; prorationLines: ChangePayload['prorationLines'] }>,
): Promise<ChangePayload> {
  const payload = await withUserErrors('result', run);
  if (!payload.result) return { subscription: null, prorationLines: [], userErrors: payload.userErrors };
  const subscription = preview
    ? await ctx.loaders.of(subscriptionLoaders).byId.load(id)
    : payload.result.subscription;
  return { subscription, prorationLines: payload.result.prorationLines, userErrors: [] };
}
const UsageRecordPayload = payloadType('UsageRecordPayload', 'usageRecord', UsageRecordRef);

builder.queryFields((t) => ({
  subscription: t.field({
    description: 'The subscription with this id; null when this environment has none.',
    type: SubscriptionRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => ctx.loaders.of(subscriptionLoaders).byId.load(id),
  }),
  subscriptions: t.connection(
    {
      description: 'The subscriptions of this environment.',
      type: SubscriptionRef,
      args: {
        filter: t.arg({
          type: SubscriptionFilterRef,
          description: 'Only subscriptions matching this filter; all when left out.',
        }),
      },
      resolve: (_root, { filter, ...page }, ctx) => new SubscriptionService(ctx).list(filter ?? {}, page),
    },
    SubscriptionConnectionRef,
  ),
}));

builder.mutationFields((t) => ({
  subscriptionCreate: t.field({
    description: 'Creates a subscription for a customer.',
    type: SubscriptionCreatePayload,
    args: {
      input: t.arg({
        type: SubscriptionCreateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('subscription', () => new SubscriptionService(ctx).create(input)),
  }),
  subscriptionUpdate: t.field({
    description:
      'Changes a subscription: items, quantities, prices, renewal; with proration for the period under way.',
    type: SubscriptionUpdatePayload,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }),
      input: t.arg({
        type: SubscriptionUpdateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
      preview: t.arg.boolean({
        description: 'Answers the proration lines the change would make, and changes nothing.',
      }),
    },
    resolve: (_root, { id, input, preview }, ctx) =>
      changeOutcome(ctx, id, preview ?? false, () =>
        new SubscriptionService(ctx).update(id, input, { preview: preview ?? false }),
      ),
  }),
  subscriptionCancel: t.field({
    type: SubscriptionCancelPayload,
    description:
      'Cancels from `at` (default now): no later period is billed and it no longer renews. With proration create (default) or invoice_now, the unused days of the period under way are credited; with none, that period runs out.',
    args: {
      id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }),
      at: t
        .arg({
          type: 'DateTime',
          description: 'When the cancellation takes effect (ISO 8601); now when left out.',
        })
        .validate(Instant.nullish()),
      proration: t.arg({
        type: ProrationBehaviorEnum,
        description: 'How the unused days of the period under way are billed; create when left out.',
      }),
      preview: t.arg.boolean({
        description: 'Answers the proration lines the cancellation would make, and changes nothing.',
      }),
    },
    resolve: (_root, { id, at, proration, preview }, ctx) =>
      changeOutcome(ctx, id, preview ?? false, () =>
        new SubscriptionService(ctx).cancel(id, at ?? undefined, proration ?? 'create', {
          preview: preview ?? false,
        }),
      ),
  }),
  subscriptionScheduledChangeCancel: t.field({
    type: ScheduledChangeCancelPayload,
    description:
      'Cancels a scheduled change no billed period has used yet, with its proration lines (refused once they are invoiced, or while a later change of the item waits).',
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: async (_root, { id }, ctx) => {
      const payload = await withUserErrors('result', () =>
        new SubscriptionService(ctx).cancelScheduledChange(id),
      );
      return {
        subscription: payload.result?.subscription ?? null,
        prorationLines: [],
        userErrors: payload.userErrors,
      };
    },
  }),
  usageRecord: t.field({
    type: UsageRecordPayload,
    description:
      'Records usage of an event-based item, billed in arrears with its period. The same idempotencyKey for the same item records once.',
    args: t.validate(
      {
        subscriptionItemId: t.arg({
          type: 'UUID',
          required: true,
          description: 'The item the usage is of (billed by usage records, not a metric).',
        }),
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

nodeType('CustomerSubscription', (ctx, id) => ctx.loaders.of(subscriptionLoaders).byId.load(id));
