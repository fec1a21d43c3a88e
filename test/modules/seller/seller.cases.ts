import type { ModuleCases } from '../../support/cases.ts';

/** The seller module's operations in the isolation matrix. */
export const cases: ModuleCases = {
  isolation: {
    graphql: {
      'Query.sellerProfile': [{ args: () => ({}) }],
      'Mutation.sellerProfileUpdate': [{ args: () => ({ input: { footer: 'Thank you.' } }) }],
    },
  },
};
