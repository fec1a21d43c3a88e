import { type ModuleCases, page } from '../../support/cases.ts';

/** The tax module's operations in the isolation matrix. */
export const cases: ModuleCases = {
  isolation: {
    graphql: {
      'Query.taxCode': [{ target: 'taxCode', args: (code) => ({ code }) }],
      'Query.taxCodes': [{ args: page }],
      'Mutation.taxCodeUpdate': [{ target: 'taxCodeId', args: (id) => ({ id, input: { rate: 10 } }) }],
    },
  },
};
