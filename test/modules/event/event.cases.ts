import { type ModuleCases, page } from '../../support/cases.ts';

/** The event module's operations in the isolation matrix. */
export const cases: ModuleCases = {
  isolation: {
    graphql: {
      'Query.events': [{ args: page }, { target: 'customer', args: (id) => ({ objectId: id, first: 20 }) }],
    },
  },
};
