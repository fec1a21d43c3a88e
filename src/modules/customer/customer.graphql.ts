import { z } from 'zod';
import { builder } from '../../graphql/builder.ts';
import { NodeRef, nodeType } from '../../graphql/node.ts';
import { orderInput } from '../../graphql/ordering.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import { TaxExemptEnum, TaxIdInputRef, TaxIdRef } from '../tax/tax-policy.graphql.ts';
import { type BillingAddress, COLLECTION_MODES, type Customer } from './customer.entity.ts';
import { CustomerCreateInput, CustomerUpdateInput } from './customer.input.ts';
import { customerLoaders } from './customer.reads.ts';
import { CustomerService } from './customer.service.ts';

export const CollectionModeEnum = builder.enumType('CollectionMode', {
  values: COLLECTION_MODES,
});

export const BillingAddressRef = builder.objectRef<BillingAddress>('BillingAddress').implement({
  fields: (t) => ({
    street1: t.exposeString('street1', { nullable: true }),
    street2: t.exposeString('street2', { nullable: true }),
    postalCode: t.exposeString('postalCode', { nullable: true }),
    city: t.exposeString('city', { nullable: true }),
    county: t.exposeString('county', { nullable: true }),
    country: t.exposeString('country', { nullable: true }),
    state: t.exposeString('state', { nullable: true }),
  }),
});

export const CustomerRef = builder.objectRef<Customer>('Customer').implement({
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'A UUID; the same id in REST.' }),
    name: t.exposeString('name'),
    companyName: t.exposeString('companyName', { nullable: true }),
    handle: t.exposeString('handle', { nullable: true, description: 'Unique within the environment.' }),
    email: t.exposeString('email', { nullable: true }),
    currency: t.exposeString('currency', { nullable: true, description: 'Preferred ISO 4217 currency.' }),
    paymentTerm: t.exposeString('paymentTerm', {
      nullable: true,
      description: 'net<N>: invoices fall due N days after their date.',
    }),
    collectionMode: t.expose('collectionMode', { type: CollectionModeEnum }),
    billingAddress: t.expose('billingAddress', { type: BillingAddressRef }),
    taxIds: t.expose('taxIds', { type: [TaxIdRef] }),
    taxExempt: t.expose('taxExempt', { type: TaxExemptEnum }),
    timezone: t.exposeString('timezone', {
      description: 'IANA time zone: subscription periods begin at local midnight there.',
    }),
    testClockId: t.expose('testClockId', {
      type: 'UUID',
      nullable: true,
      description: 'The test clock whose time the customer lives on (test environments), set at creation.',
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

export const BillingAddressInputRef = builder.inputType('BillingAddressInput', {
  fields: (t) => ({
    street1: t.string(),
    street2: t.string(),
    postalCode: t.string(),
    city: t.string(),
    county: t.string(),
    country: t.string(),
    state: t.string(),
  }),
});

const CustomerCreateInputRef = builder
  .inputType('CustomerCreateInput', {
    fields: (t) => ({
      name: t.string({ required: true }),
      companyName: t.string(),
      handle: t.string(),
      email: t.string(),
      currency: t.string({ description: 'ISO 4217 code, either case.' }),
      paymentTerm: t.string({ description: 'net<N>, e.g. net30.' }),
      collectionMode: t.field({ type: CollectionModeEnum, description: 'Defaults to send_invoice.' }),
      billingAddress: t.field({ type: BillingAddressInputRef }),
      taxIds: t.field({ type: [TaxIdInputRef] }),
      taxExempt: t.field({ type: TaxExemptEnum, description: 'Defaults to none.' }),
      timezone: t.string({ description: "IANA time zone; defaults to the environment's." }),
      testClockId: t.field({
        type: 'UUID',
        description:
          'Test environments only: the test clock the customer lives on, for good (it cannot change later). ' +
          'Its subscriptions, previews, invoices and overdue checks use the clock’s time, and only the ' +
          'clock’s advances bill it. TEST_CLOCK_LIVE_ENVIRONMENT in a live environment.',
      }),
    }),
  })
  .validate(CustomerCreateInput);

const CustomerUpdateInputRef = builder
  .inputType('CustomerUpdateInput', {
    description: 'Fields left out stay as they are; fields set to null are cleared.',
    fields: (t) => ({
      name: t.string(),
      companyName: t.string(),
      handle: t.string(),
      email: t.string(),
      currency: t.string(),
      paymentTerm: t.string(),
      collectionMode: t.field({ type: CollectionModeEnum }),
      billingAddress: t.field({ type: BillingAddressInputRef }),
      taxIds: t.field({ type: [TaxIdInputRef], description: 'Replaces the list.' }),
      taxExempt: t.field({ type: TaxExemptEnum }),
      timezone: t.string({ description: 'IANA time zone; applies to subscriptions created afterwards.' }),
    }),
  })
  .validate(CustomerUpdateInput);

const CustomerFilterRef = builder.inputType('CustomerFilter', {
  description: 'Narrows a list of customers; every condition given must hold.',
  fields: (t) => ({
    search: t.string({
      description: 'Part of the name, company name, handle or e-mail address, in any case.',
      validate: z.string().max(250),
    }),
    currency: t.string({
      description: 'Preferred currency (ISO 4217, either case).',
      validate: z.string().length(3),
    }),
  }),
});

const CustomerOrder = orderInput<Customer>('Customer', 'customers', {
  created_at: { field: 'id', description: 'Creation time (the default).' },
  name: { field: 'name', description: 'Name, in the database collation.' },
});

const CustomerCreatePayload = payloadType('CustomerCreatePayload', 'customer', CustomerRef);
const CustomerUpdatePayload = payloadType('CustomerUpdatePayload', 'customer', CustomerRef);

builder.queryFields((t) => ({
  customer: t.field({
    type: CustomerRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => ctx.loaders.of(customerLoaders).byId.load(id),
  }),
  customerByHandle: t.field({
    type: CustomerRef,
    nullable: true,
    description: "The environment's customer with this handle; null when there is none.",
    args: { handle: t.arg.string({ required: true, description: 'The handle, as stored.' }) },
    resolve: (_root, { handle }, ctx) => new CustomerService(ctx).findByHandle(handle),
  }),
  customers: t.connection(
    {
      type: CustomerRef,
      description: "The environment's customers, in creation order unless `orderBy` says otherwise.",
      args: {
        filter: t.arg({
          type: CustomerFilterRef,
          description: 'Only items matching every field given; all when left out.',
        }),
        orderBy: t.arg({
          type: CustomerOrder.ref,
          description: 'The sort order; creation order when left out.',
        }),
      },
      resolve: (_root, { filter, orderBy, ...page }, ctx) =>
        new CustomerService(ctx).list(page, filter ?? {}, CustomerOrder.toSort(orderBy)),
    },
    { name: 'CustomerConnection' },
    { name: 'CustomerEdge' },
  ),
}));

builder.mutationFields((t) => ({
  customerCreate: t.field({
    type: CustomerCreatePayload,
    args: {
      input: t.arg({
        type: CustomerCreateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('customer', () => new CustomerService(ctx).create(input)),
  }),
  customerUpdate: t.field({
    type: CustomerUpdatePayload,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }),
      input: t.arg({
        type: CustomerUpdateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('customer', () => new CustomerService(ctx).update(id, input)),
  }),
}));

nodeType('Customer', (ctx, id) => ctx.loaders.of(customerLoaders).byId.load(id));
