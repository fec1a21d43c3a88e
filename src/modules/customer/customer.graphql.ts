import { z } from 'zod';
import { builder } from '../../graphql/builder.ts';
import { objectType, perSelection, propertiesRead } from '../../graphql/columns.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { NodeRef, nodeType } from '../../graphql/node.ts';
import { orderInput } from '../../graphql/ordering.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import { TaxExemptEnum, TaxIdInputRef, TaxIdRef } from '../tax/tax-policy.graphql.ts';
import { type BillingAddress, COLLECTION_MODES, type Customer } from './customer.entity.ts';
import { CustomerCreateInput, CustomerUpdateInput } from './customer.input.ts';
import { customerLoaders } from './customer.reads.ts';
import { CustomerService } from './customer.service.ts';

export const CollectionModeEnum = builder.enumType('CollectionMode', {
  description: 'How a customer’s invoices are collected after a billing run makes them.',
  values: describedValues(COLLECTION_MODES, {
    automatic: 'Invoices are booked and collected automatically (e.g. by a payment provider).',
    send_invoice: 'Invoices are booked and sent to the customer to pay (the default).',
    draft_invoice: 'Invoices stay drafts for someone to check and book.',
  }),
});

export const BillingAddressRef = builder.objectRef<BillingAddress>('BillingAddress').implement({
  description: 'A postal address for invoices. Every part may be null (not given).',
  fields: (t) => ({
    street1: t.exposeString('street1', {
      nullable: true,
      description: 'Street and number; null when not given.',
    }),
    street2: t.exposeString('street2', {
      nullable: true,
      description: 'A second address line; null when not given.',
    }),
    postalCode: t.exposeString('postalCode', {
      nullable: true,
      description: 'Postal code; null when not given.',
    }),
    city: t.exposeString('city', { nullable: true, description: 'City; null when not given.' }),
    county: t.exposeString('county', { nullable: true, description: 'County; null when not given.' }),
    country: t.exposeString('country', {
      nullable: true,
      description: 'Country, as given (e.g. an ISO 3166 code); null when not given.',
    }),
    state: t.exposeString('state', {
      nullable: true,
      description: 'State or province; null when not given.',
    }),
  }),
});

export const CustomerRef = builder.objectRef<Customer>('Customer').implement({
  description: 'A customer: who is billed, where, and how.',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'A UUID; the same id in REST.' }),
    name: t.exposeString('name', {
      description: 'The customer’s name (a person’s, or the contact’s at a company).',
    }),
    companyName: t.exposeString('companyName', {
      nullable: true,
      description: 'The company’s name; null for a person.',
    }),
    handle: t.exposeString('handle', { nullable: true, description: 'Unique within the environment.' }),
    email: t.exposeString('email', {
      nullable: true,
      description: 'Where invoices are e-mailed; null when not given.',
    }),
    currency: t.exposeString('currency', { nullable: true, description: 'Preferred ISO 4217 currency.' }),
    paymentTerm: t.exposeString('paymentTerm', {
      nullable: true,
      description: 'net<N>: invoices fall due N days after their date.',
    }),
    collectionMode: t.expose('collectionMode', {
      type: CollectionModeEnum,
      description: 'How its invoices are collected.',
    }),
    billingAddress: t.expose('billingAddress', {
      type: BillingAddressRef,
      description: 'The address printed on invoices.',
    }),
    taxIds: t.expose('taxIds', {
      type: [TaxIdRef],
      description: 'The customer’s tax ids (e.g. VAT numbers).',
    }),
    taxExempt: t.expose('taxExempt', {
      type: TaxExemptEnum,
      description: 'Whether the customer is exempt from tax, or reverse-charged.',
    }),
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
  description: 'A postal address. Every part is optional; a part left out or null is not given.',
  fields: (t) => ({
    street1: t.string({ description: 'Street and number.' }),
    street2: t.string({ description: 'A second address line.' }),
    postalCode: t.string({ description: 'Postal code.' }),
    city: t.string({ description: 'City.' }),
    county: t.string({ description: 'County.' }),
    country: t.string({ description: 'Country (e.g. an ISO 3166 code).' }),
    state: t.string({ description: 'State or province.' }),
  }),
});

const CustomerCreateInputRef = builder
  .inputType('CustomerCreateInput', {
    description: 'A new customer.',
    fields: (t) => ({
      name: t.string({ required: true, description: 'The customer’s name (1 to 250 characters).' }),
      companyName: t.string({ description: 'The company’s name; none for a person.' }),
      handle: t.string({
        description: 'A unique handle within the environment, for lookups; none when left out.',
      }),
      email: t.string({ description: 'Where invoices are e-mailed.' }),
      currency: t.string({ description: 'ISO 4217 code, either case.' }),
      paymentTerm: t.string({ description: 'net<N>, e.g. net30.' }),
      collectionMode: t.field({ type: CollectionModeEnum, description: 'Defaults to send_invoice.' }),
      billingAddress: t.field({
        type: BillingAddressInputRef,
        description: 'The address printed on invoices.',
      }),
      taxIds: t.field({ type: [TaxIdInputRef], description: 'The customer’s tax ids (e.g. VAT numbers).' }),
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
      name: t.string({ description: 'A new name.' }),
      companyName: t.string({ description: 'A new company name; null clears it.' }),
      handle: t.string({ description: 'A new handle; null clears it.' }),
      email: t.string({ description: 'A new e-mail address; null clears it.' }),
      currency: t.string({
        description: 'A new preferred currency (ISO 4217, either case); null clears it.',
      }),
      paymentTerm: t.string({ description: 'A new payment term, net<N> (e.g. net30); null clears it.' }),
      collectionMode: t.field({ type: CollectionModeEnum, description: 'A new collection mode.' }),
      billingAddress: t.field({
        type: BillingAddressInputRef,
        description: 'A new address; null clears it.',
      }),
      taxIds: t.field({ type: [TaxIdInputRef], description: 'Replaces the list.' }),
      taxExempt: t.field({ type: TaxExemptEnum, description: 'A new tax exemption status.' }),
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

/** The columns a `customer(id)` selection reads, worked out once per parsed document. */
const customerColumns = perSelection((info) => propertiesRead(info, [], objectType(info, 'Customer')));

builder.queryFields((t) => ({
  customer: t.field({
    description: 'The customer with this id; null when this environment has none.',
    type: CustomerRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    // Reads only the columns the selection's fields read (all of them when one may read anything).
    resolve: (_root, { id }, ctx, info) =>
      ctx.loaders.of(customerLoaders).byIdReading(customerColumns(info)).load(id),
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
    description: 'Creates a customer.',
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
    description: 'Changes a customer.',
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
