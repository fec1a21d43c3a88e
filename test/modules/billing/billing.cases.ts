import { BILLING_AS_OF } from '../../security/fixtures.ts';
import { byId, type ModuleCases, page } from '../../support/cases.ts';

/** The billing module's operations in the isolation matrix. */
export const cases: ModuleCases = {
  isolation: {
    graphql: {
      'Query.billingRun': [byId('billingRun')],
      'Query.billingRuns': [{ args: page }],
      'Query.invoicePreview': [
        { target: 'customer', args: (id) => ({ customerId: id, asOf: BILLING_AS_OF }) },
        { target: 'subscription', args: (id) => ({ subscriptionId: id, asOf: BILLING_AS_OF }) },
      ],
      'Mutation.billingRunCreate': [{ args: () => ({ asOf: BILLING_AS_OF }) }],
    },
  },
};
