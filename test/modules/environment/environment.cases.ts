import type { ModuleCases } from '../../support/cases.ts';

/** The environment module's operations in the isolation matrix. */
export const cases: ModuleCases = {
  isolation: {
    graphql: {
      'Query.environment': [{ args: () => ({}) }],
      // The default value: the matrix's environments keep computing tax as the other cases expect.
      'Mutation.environmentUpdate': [{ args: () => ({ input: { taxRounding: 'document' } }) }],
    },
  },
};
