import { type ModuleCases, page } from '../../support/cases.ts';

/** The audit module's operations in the isolation matrix. */
export const cases: ModuleCases = {
  isolation: {
    graphql: {
      'Query.auditEvents': [
        { args: page },
        { target: 'customer', args: (id) => ({ objectId: id, first: 20 }) },
      ],
    },
  },
};
