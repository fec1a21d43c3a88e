import { byId, type ModuleCases, page } from '../../support/cases.ts';

/** The ledger module's operations in the isolation matrix and the REST fuzzer. */
export const cases: ModuleCases = {
  isolation: {
    rest: {
      'GET /accountsets': [{ request: () => ({ path: '/accountsets?limit=100' }) }],
      'GET /journal-entries': [
        { request: () => ({ path: '/journal-entries?from=2026-01-01&to=2099-12-31' }) },
      ],
      'GET /accountsets/{accountSetId}': [
        { target: 'accountSet', request: (id) => ({ path: `/accountsets/${id}` }) },
      ],
      'POST /accountsets': [
        {
          target: 'ledgerAccount',
          request: (id, own) => ({
            path: '/accountsets',
            body: {
              name: 'Matrix set',
              salesAccountId: id,
              incomeAccountId: own.ledgerAccount,
              taxAccountId: own.ledgerAccount,
              deferralAccountId: own.ledgerAccount,
            },
          }),
        },
      ],
    },
    graphql: {
      'Query.accountSet': [byId('accountSet')],
      'Query.accountSets': [{ args: page }],
      'Query.ledgerAccount': [byId('ledgerAccount')],
      'Query.ledgerAccounts': [{ args: page }],
      'Mutation.accountSetCreate': [
        {
          target: 'ledgerAccount',
          args: (id, own) => ({
            input: {
              salesAccountId: id,
              incomeAccountId: own.ledgerAccount,
              taxAccountId: own.ledgerAccount,
              deferralAccountId: own.ledgerAccount,
            },
          }),
        },
      ],
      'Mutation.ledgerAccountUpdate': [
        { target: 'ledgerAccount', args: (id) => ({ id, input: { name: 'Renamed' } }) },
      ],
      'Query.ledgerSettings': [{ args: () => ({}) }],
      'Query.journalEntries': [
        { args: page },
        { target: 'bookedInvoice', args: (id) => ({ first: 20, filter: { invoiceId: id } }) },
        { target: 'customer', args: (id) => ({ first: 20, filter: { customerId: id } }) },
        { target: 'ledgerAccount', args: (id) => ({ first: 20, filter: { accountId: id } }) },
      ],
      'Query.trialBalance': [{ args: () => ({ asOf: '2099-12-31' }) }],
      'Query.deferredRevenue': [{ args: () => ({ asOf: '2026-01-01' }) }],
      'Mutation.revenueRecognitionRun': [{ args: () => ({ upTo: '2099-12-31' }) }],
      'Mutation.ledgerSettingsUpdate': [
        { target: 'ledgerAccount', args: (id) => ({ input: { cashAccountId: id } }) },
        { target: 'accountSet', args: (id) => ({ input: { defaultAccountSetId: id } }) },
      ],
      'Mutation.productAccountSetSet': [
        { target: 'product', args: (id, own) => ({ productId: id, accountSetId: own.accountSet }) },
        { target: 'accountSet', args: (id, own) => ({ productId: own.product, accountSetId: id }) },
      ],
    },
  },
  fuzz: {
    bodies: {
      'POST /accountsets': ({ accountIds: [sales, income, tax, deferral] }) => ({
        name: 'Fuzz accounts',
        salesAccountId: sales,
        incomeAccountId: income,
        taxAccountId: tax,
        deferralAccountId: deferral,
        recognitionStrategy: 'even_distribution',
      }),
    },
    existingIds: { accountSetId: (fixtures) => fixtures.accountSetId },
  },
};
