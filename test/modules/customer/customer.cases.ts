import { byId, type ModuleCases, page } from '../../support/cases.ts';

/** The customer module's operations in the isolation matrix and the REST fuzzer. */
export const cases: ModuleCases = {
  isolation: {
    rest: {
      'GET /customers': [{ request: () => ({ path: '/customers?limit=100' }) }],
      'POST /customers': [{ request: () => ({ path: '/customers', body: { name: 'Matrix customer' } }) }],
      'GET /customers/{customerId}': [
        { target: 'customer', request: (id) => ({ path: `/customers/${id}` }) },
      ],
      'PATCH /customers/{customerId}': [
        { target: 'customer', request: (id) => ({ path: `/customers/${id}`, body: { name: 'Renamed' } }) },
      ],
    },
    graphql: {
      'Query.customer': [byId('customer')],
      'Query.customers': [{ args: page }],
      'Query.customerByHandle': [{ target: 'customerHandle', args: (handle) => ({ handle }) }],
      'Mutation.customerUpdate': [{ target: 'customer', args: (id) => ({ id, input: { name: 'Renamed' } }) }],
    },
  },
  fuzz: {
    bodies: {
      'POST /customers': () => ({
        name: 'Fuzz Created',
        email: 'fuzz@example.com',
        currency: 'EUR',
        paymentTerm: 'net14',
        billingAddress: { city: 'Berlin', country: 'DE' },
      }),
      'PATCH /customers/{customerId}': () => ({
        name: 'Fuzz Customer',
        companyName: 'Fuzz Ltd',
        handle: 'fuzz-customer',
        email: 'billing@fuzz.example',
        currency: 'EUR',
      }),
    },
    existingIds: { customerId: (fixtures) => fixtures.customerId },
  },
};
