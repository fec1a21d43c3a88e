import { z } from 'zod';
import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { NodeRef, nodeType } from '../../graphql/node.ts';
import { orderInput } from '../../graphql/ordering.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import { TaxBehaviorEnum } from '../tax/tax-policy.graphql.ts';
import { BILLING_METHODS, PRICE_MODELS, type Price, PURCHASES, TERM_UNITS } from './price.entity.ts';
import { PriceCreateGraphqlInput, PriceUpdateGraphqlInput } from './price.input.ts';
import { priceLoaders } from './price.reads.ts';
import { PriceService } from './price.service.ts';

export const TermUnitEnum = builder.enumType('TermUnit', {
  description: 'The unit of a price’s term (its billing period’s length, with termCount).',
  values: describedValues(TERM_UNITS, {
    day: 'Days.',
    week: 'Weeks (7 days).',
    month: 'Calendar months.',
    year: 'Calendar years.',
  }),
});
export const PurchaseEnum = builder.enumType('Purchase', {
  description: 'Whether a price bills once or every period.',
  values: describedValues(PURCHASES, {
    one_time: 'Billed once, for the first period.',
    recurring: 'Billed every period.',
  }),
});
export const PriceModelEnum = builder.enumType('PriceModel', {
  description: 'How a price turns a quantity into an amount (see pricing).',
  values: describedValues(PRICE_MODELS, {
    fee: 'A flat amount per unit.',
    volume: 'The tier the whole quantity falls in prices every unit.',
    graduated: 'Each tier prices the units that fall in it.',
    package: 'A fixed amount per started package of packageSize units.',
  }),
});
export const BillingMethodEnum = builder.enumType('BillingMethod', {
  description: 'When an item at the price bills.',
  values: describedValues(BILLING_METHODS, {
    advance: 'At the start of each period, for that period.',
    arrears: 'At the end of each period, for that period.',
    event_based: 'At the end of each period, by the usage recorded in it.',
  }),
});

const PRICING_DESCRIPTION =
  'Lowercase ISO 4217 currency code -> entry in minor units, shaped by priceModel: ' +
  'fee {amount}; volume and graduated {tiers: [{upTo, unitAmount, flatAmount?}], last upTo null}; ' +
  'package {amount, packageSize}.';

export const PriceRef = builder.objectRef<Price>('Price').implement({
  description: 'A price of a product: how much, how often, in which currencies.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'A UUID; the same id in REST.' }),
    name: t.exposeString('name', { description: 'A name for people (1 to 250 characters).' }),
    description: t.exposeString('description', {
      nullable: true,
      description: "Internal notes for the operator's team, hidden from customers.",
    }),
    termUnit: t.expose('termUnit', { type: TermUnitEnum, description: 'The unit of the term.' }),
    termCount: t.exposeInt('termCount', {
      description: 'Billing cycle length in termUnits (30 with day: 30 days).',
    }),
    purchase: t.expose('purchase', { type: PurchaseEnum, description: 'Fixed at creation.' }),
    priceModel: t.expose('priceModel', {
      type: PriceModelEnum,
      description: 'How a quantity becomes an amount.',
    }),
    method: t.expose('method', {
      type: BillingMethodEnum,
      description: 'When periods are billed. Fixed at creation; not part of the REST response.',
    }),
    pricing: t.expose('pricing', { type: 'JSONObject', description: PRICING_DESCRIPTION }),
    taxBehavior: t.expose('taxBehavior', {
      type: TaxBehaviorEnum,
      description:
        'Whether the amounts include tax; invoice lines billed from the price carry it. Not in REST.',
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

const PriceCreateInputRef = builder
  .inputType('PriceCreateInput', {
    description: 'A new price of a product.',
    fields: (t) => ({
      name: t.string({ required: true, description: '1 to 250 characters.' }),
      termUnit: t.field({ type: TermUnitEnum, required: true, description: 'The unit of the term.' }),
      termCount: t.int({ required: true, description: '1 to 10000.' }),
      purchase: t.field({ type: PurchaseEnum, required: true, description: 'Fixed at creation.' }),
      priceModel: t.field({
        type: PriceModelEnum,
        required: true,
        description: 'How a quantity becomes an amount.',
      }),
      method: t.field({ type: BillingMethodEnum, required: true, description: 'Fixed at creation.' }),
      description: t.string({ description: 'At most 4000 characters.' }),
      pricing: t.field({ type: 'JSONObject', description: PRICING_DESCRIPTION }),
      taxBehavior: t.field({ type: TaxBehaviorEnum, description: 'Defaults to exclusive.' }),
    }),
  })
  .validate(PriceCreateGraphqlInput);

const PriceUpdateInputRef = builder
  .inputType('PriceUpdateInput', {
    description:
      'Replaces the price: a description or pricing left out is cleared. purchase and method are fixed at creation.',
    fields: (t) => ({
      name: t.string({ required: true, description: '1 to 250 characters.' }),
      termUnit: t.field({ type: TermUnitEnum, required: true, description: 'The unit of the term.' }),
      termCount: t.int({ required: true, description: '1 to 10000.' }),
      priceModel: t.field({
        type: PriceModelEnum,
        required: true,
        description: 'How a quantity becomes an amount.',
      }),
      description: t.string({ description: 'At most 4000 characters.' }),
      pricing: t.field({ type: 'JSONObject', description: PRICING_DESCRIPTION }),
      taxBehavior: t.field({ type: TaxBehaviorEnum, description: 'Left out: stays as it is.' }),
    }),
  })
  .validate(PriceUpdateGraphqlInput);

const PriceFilterRef = builder.inputType('PriceFilter', {
  description: 'Narrows a list of prices; every condition given must hold.',
  fields: (t) => ({
    search: t.string({ description: 'Part of the name, in any case.', validate: z.string().max(250) }),
    currency: t.string({
      description: 'Only prices with an amount in this currency (ISO 4217, either case).',
      validate: z.string().length(3),
    }),
    priceModel: t.field({ type: PriceModelEnum, description: 'Only prices of this model.' }),
    purchase: t.field({ type: PurchaseEnum, description: 'Only one-time or only recurring prices.' }),
  }),
});

const PriceOrder = orderInput<Price>('Price', 'prices', {
  created_at: { field: 'id', description: 'Creation time (the default).' },
  name: { field: 'name', description: 'Name, in the database collation.' },
});

const PriceCreatePayload = payloadType('PriceCreatePayload', 'price', PriceRef);
const PriceUpdatePayload = payloadType('PriceUpdatePayload', 'price', PriceRef);

builder.queryFields((t) => ({
  price: t.field({
    description: 'The price with this id; null when this environment has none.',
    type: PriceRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => ctx.loaders.of(priceLoaders).byId.load(id),
  }),
  prices: t.connection(
    {
      type: PriceRef,
      description: "The environment's prices, in creation order unless `orderBy` says otherwise.",
      args: {
        filter: t.arg({
          type: PriceFilterRef,
          description: 'Only items matching every field given; all when left out.',
        }),
        orderBy: t.arg({
          type: PriceOrder.ref,
          description: 'The sort order; creation order when left out.',
        }),
      },
      resolve: (_root, { filter, orderBy, ...page }, ctx) =>
        new PriceService(ctx).list(page, filter ?? {}, PriceOrder.toSort(orderBy)),
    },
    { name: 'PriceConnection' },
    { name: 'PriceEdge' },
  ),
}));

builder.mutationFields((t) => ({
  priceCreate: t.field({
    description: 'Creates a price.',
    type: PriceCreatePayload,
    args: {
      input: t.arg({
        type: PriceCreateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { input }, ctx) => withUserErrors('price', () => new PriceService(ctx).create(input)),
  }),
  priceUpdate: t.field({
    description: 'Replaces a price’s figures.',
    type: PriceUpdatePayload,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }),
      input: t.arg({
        type: PriceUpdateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('price', () => new PriceService(ctx).update(id, input)),
  }),
}));

nodeType('Price', (ctx, id) => ctx.loaders.of(priceLoaders).byId.load(id));
