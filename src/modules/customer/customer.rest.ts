import type { Route } from '../../rest/router.ts';
import { parseInput, withoutReadOnly } from '../../validation.ts';
import { BILLING_ADDRESS_FIELDS, type Customer } from './customer.entity.ts';
import { CUSTOMER_READ_ONLY_FIELDS, CustomerPatchBody } from './customer.input.ts';
import { CustomerService } from './customer.service.ts';

/** The customer as contract 2.6 shows it (no companyName: the contract's response does not list it). */
export const customerResponse = (customer: Customer) => ({
  id: customer.id,
  name: customer.name,
  handle: customer.handle,
  createdAt: customer.createdAt.toISOString(),
  updatedAt: customer.updatedAt?.toISOString() ?? null,
  billingAddress: Object.fromEntries(
    BILLING_ADDRESS_FIELDS.map((field) => [field, customer.billingAddress[field] ?? null]),
  ),
  paymentTerm: customer.paymentTerm,
  email: customer.email,
  currency: customer.currency,
  collectionMode: customer.collectionMode,
});

export const customerRoutes: Route[] = [
  {
    method: 'GET',
    path: '/customers/{customerId}',
    handler: async ({ ctx, params }) => ({
      status: 200,
      body: customerResponse(await new CustomerService(ctx).get(params.customerId as string)),
    }),
  },
  {
    method: 'PATCH',
    path: '/customers/{customerId}',
    handler: async ({ ctx, params, body }) => {
      const input = parseInput(CustomerPatchBody, withoutReadOnly(body, CUSTOMER_READ_ONLY_FIELDS));
      const customer = await new CustomerService(ctx).update(params.customerId as string, input);
      return { status: 200, body: customerResponse(customer) };
    },
  },
];
