import { byId, type ModuleCases, page } from '../../support/cases.ts';

/** The customer module's operations in the isolation matrix and the REST fuzzer. */
export const cases: ModuleCases = {
  isolation: {
    rest: {
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
      'Mutation.customerUpdate': [{ target: 'customer', args: (id) => ({ id, input: { name: 'Renamed' } }) }],
    },
  },
  fuzz: {
    bodies: {
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
