import { z } from 'zod';
import { listRoute } from '../../rest/list.ts';
import type { Route } from '../../rest/router.ts';
import { parseInput, withoutReadOnly } from '../../validation.ts';
import { BILLING_ADDRESS_FIELDS, COLLECTION_MODES, type Customer } from './customer.entity.ts';
import { CUSTOMER_READ_ONLY_FIELDS, CustomerCreateBody, CustomerPatchBody } from './customer.input.ts';
import { CustomerService } from './customer.service.ts';

/** Contract 2.5 and 2.6 (no companyName: the contract's customer response does not list it). */
export const BillingAddressResponse = z
  .object(Object.fromEntries(BILLING_ADDRESS_FIELDS.map((field) => [field, z.string().nullable()])))
  .meta({ id: 'BillingAddress' });
export const CustomerResponse = z
  .object({
    id: z.uuid(),
    name: z.string().nullable(),
    handle: z.string().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime().nullable(),
    billingAddress: BillingAddressResponse,
    paymentTerm: z.string().nullable(),
    email: z.string().nullable(),
    currency: z.string().nullable(),
    collectionMode: z.enum(COLLECTION_MODES),
  })
  .meta({ id: 'Customer' });

export const billingAddressResponse = (address: Customer['billingAddress']) =>
  Object.fromEntries(BILLING_ADDRESS_FIELDS.map((field) => [field, address[field] ?? null]));

/** A customer as its REST answer (and the events about it) show it. */
export type CustomerAnswer = z.infer<typeof CustomerResponse>;

export const customerResponse = (customer: Customer): CustomerAnswer => ({
  id: customer.id,
  name: customer.name,
  handle: customer.handle ?? null,
  createdAt: customer.createdAt.toISOString(),
  updatedAt: customer.updatedAt?.toISOString() ?? null,
  billingAddress: billingAddressResponse(customer.billingAddress),
  paymentTerm: customer.paymentTerm ?? null,
  email: customer.email ?? null,
  currency: customer.currency ?? null,
  collectionMode: customer.collectionMode,
});

export const customerRoutes: Route[] = [
  {
    method: 'POST',
    path: '/customers',
    summary: 'Create a customer (beyond the contract)',
    body: CustomerCreateBody,
    response: {
      status: 201,
      description: 'Created; Location names the new customer',
      schema: CustomerResponse,
    },
    handler: async ({ ctx, body }) => {
      const input = parseInput(CustomerCreateBody, withoutReadOnly(body, CUSTOMER_READ_ONLY_FIELDS));
      const customer = await new CustomerService(ctx).create(input);
      return {
        status: 201,
        body: customerResponse(customer),
        headers: { location: `/customers/${customer.id}` },
      };
    },
  },
  {
    method: 'GET',
    path: '/customers/{customerId}',
    summary: 'Read a customer',
    response: { status: 200, description: 'The customer', schema: CustomerResponse },
    handler: async ({ ctx, params }) => ({
      status: 200,
      body: customerResponse(await new CustomerService(ctx).get(params.customerId as string)),
    }),
  },
  {
    method: 'PATCH',
    path: '/customers/{customerId}',
    summary: 'Update a customer (absent fields stay, null clears)',
    body: CustomerPatchBody,
    response: { status: 200, description: 'The updated customer', schema: CustomerResponse },
    handler: async ({ ctx, params, body }) => {
      const input = parseInput(CustomerPatchBody, withoutReadOnly(body, CUSTOMER_READ_ONLY_FIELDS));
      // When the customer changed, the answer is the one its `customer.updated` event carries, built once.
      const { answer } = await new CustomerService(ctx).updateAnswered(params.customerId as string, input);
      return { status: 200, body: answer };
    },
  },
  listRoute({
    path: '/customers',
    what: 'customers',
    item: CustomerResponse,
    list: (ctx, page) => new CustomerService(ctx).list(page),
    respond: (_ctx, customers) => customers.map(customerResponse),
  }),
];
