import { BILLING_AS_OF } from '../../security/fixtures.ts';
import { byId, type ModuleCases, page } from '../../support/cases.ts';

/** The billing module's operations in the isolation matrix. */
export const cases: ModuleCases = {
  isolation: {
    graphql: {
      'Query.billingRun': [byId('billingRun')],
      'Query.billingRuns': [{ args: page }],
      'Mutation.billingRunCreate': [{ args: () => ({ asOf: BILLING_AS_OF }) }],
    },
  },
};
