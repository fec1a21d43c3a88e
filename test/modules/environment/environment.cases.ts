import type { ModuleCases } from '../../support/cases.ts';

/** The environment module's operations in the isolation matrix. */
export const cases: ModuleCases = {
  isolation: {
    graphql: {
      'Query.environment': [{ args: () => ({}) }],
    },
  },
};
