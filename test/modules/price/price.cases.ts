import { priceBody } from '../../security/fixtures.ts';
import { byId, type ModuleCases, page } from '../../support/cases.ts';

const priceUpdate = {
  name: 'Renamed',
  description: null,
  termUnit: 'year',
  termCount: 1,
  priceModel: 'fee',
  pricing: { eur: { amount: 2999 } },
};

/** The price module's operations in the isolation matrix and the REST fuzzer. */
export const cases: ModuleCases = {
  isolation: {
    rest: {
      'GET /prices': [{ request: () => ({ path: '/prices?limit=100' }) }],
      'POST /prices': [{ request: (_, __, env) => ({ path: '/prices', body: priceBody(env) }) }],
      'GET /prices/{priceId}': [{ target: 'price', request: (id) => ({ path: `/prices/${id}` }) }],
      'PUT /prices/{priceId}': [
        { target: 'price', request: (id) => ({ path: `/prices/${id}`, body: priceUpdate }) },
      ],
    },
    graphql: {
      'Query.price': [byId('price')],
      'Query.prices': [{ args: page }],
      'Mutation.priceUpdate': [{ target: 'price', args: (id) => ({ id, input: priceUpdate }) }],
    },
  },
  fuzz: {
    bodies: {
      'POST /prices': () => ({
        name: 'Fuzz tiers',
        termUnit: 'month',
        termCount: 1,
        purchase: 'recurring',
        priceModel: 'graduated',
        method: 'arrears',
        description: 'Per request',
        pricing: {
          eur: {
            tiers: [
              { upTo: 10, unitAmount: 0.25, flatAmount: 100 },
              { upTo: null, unitAmount: 0.1 },
            ],
          },
          jpy: { tiers: [{ upTo: null, unitAmount: 1 }] },
        },
      }),
      'PUT /prices/{priceId}': () => ({
        name: 'Fuzz package',
        termUnit: 'year',
        termCount: 2,
        purchase: 'recurring',
        priceModel: 'package',
        method: 'arrears',
        description: null,
        pricing: { eur: { amount: 1000, packageSize: 100 } },
      }),
    },
    existingIds: { priceId: (fixtures) => fixtures.priceId },
  },
};
