import { INVOICE_DATE } from '../../security/fixtures.ts';
import type { ModuleCases } from '../../support/cases.ts';

/** The balance module's operations in the isolation matrix. */
export const cases: ModuleCases = {
  isolation: {
    graphql: {
      'Mutation.refundCreate': [
        {
          target: 'creditedCustomer',
          args: (id) => ({ customerId: id, input: { currency: 'EUR', amount: 100, date: INVOICE_DATE } }),
        },
      ],
    },
  },
};
