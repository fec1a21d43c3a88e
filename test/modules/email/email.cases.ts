import { byId, type ModuleCases } from '../../support/cases.ts';

/** The e-mail module's operations in the isolation matrix. */
export const cases: ModuleCases = {
  isolation: {
    graphql: {
      'Query.emailSettings': [{ args: () => ({}) }],
      'Mutation.emailSettingsUpdate': [{ args: () => ({ input: { maxReminders: 3 } }) }],
      'Mutation.invoiceEmailSend': [byId('bookedInvoice')],
    },
  },
};
