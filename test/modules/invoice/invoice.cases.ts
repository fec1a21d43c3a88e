import { INVOICE_DATE } from '../../security/fixtures.ts';
import { byId, type ModuleCases, page } from '../../support/cases.ts';

const item = { quantity: 1, unitAmount: 100, title: 'Matrix line' };

/** The invoice module's operations in the isolation matrix and the REST fuzzer. */
export const cases: ModuleCases = {
  isolation: {
    rest: {
      'GET /invoices': [{ request: () => ({ path: '/invoices?limit=100' }) }],
      'POST /invoices': [
        {
          target: 'customer',
          request: (id) => ({
            path: '/invoices',
            body: { customerId: id, currency: 'EUR', date: INVOICE_DATE, items: null },
          }),
        },
        {
          target: 'taxCode',
          request: (code, own) => ({
            path: '/invoices',
            body: {
              customerId: own.customer,
              currency: 'EUR',
              date: INVOICE_DATE,
              items: [{ ...item, taxCode: code }],
            },
          }),
        },
        {
          // No title: only a product found by its handle can supply one.
          target: 'productHandle',
          request: (handle, own) => ({
            path: '/invoices',
            body: {
              customerId: own.customer,
              currency: 'EUR',
              date: INVOICE_DATE,
              items: [{ quantity: 1, unitAmount: 100, sku: handle }],
            },
          }),
        },
      ],
      'GET /invoices/{invoiceId}': [
        { target: 'draftInvoice', request: (id) => ({ path: `/invoices/${id}` }) },
        { target: 'bookedInvoice', request: (id) => ({ path: `/invoices/${id}` }) },
      ],
      'GET /invoices/{invoiceId}/ubl.xml': [
        { target: 'bookedInvoice', request: (id) => ({ path: `/invoices/${id}/ubl.xml` }) },
      ],
      'GET /invoices/{invoiceId}/cii.xml': [
        { target: 'bookedInvoice', request: (id) => ({ path: `/invoices/${id}/cii.xml` }) },
      ],
      'GET /invoices/{invoiceId}/xrechnung.xml': [
        { target: 'bookedInvoice', request: (id) => ({ path: `/invoices/${id}/xrechnung.xml` }) },
      ],
      'GET /invoices/{invoiceId}/facturx.pdf': [
        { target: 'bookedInvoice', request: (id) => ({ path: `/invoices/${id}/facturx.pdf` }) },
      ],
    },
    graphql: {
      'Query.invoice': [byId('draftInvoice'), byId('bookedInvoice')],
      'Query.invoiceNumbering': [{ args: () => ({}) }],
      // Numbers are per environment (both have INV-000001): another environment's number names an own
      // invoice, so this case runs without a target; test/graphql-frontend covers the lookup's scope.
      'Query.invoiceByNumber': [{ args: () => ({ number: 'INV-000001' }) }],
      'Query.node': [
        { target: 'customer', args: (id) => ({ id }) },
        { target: 'bookedInvoice', args: (id) => ({ id }) },
      ],
      'Query.nodes': [{ target: 'customer', args: (id) => ({ ids: [id] }) }],
      'Query.invoices': [
        { args: page },
        { target: 'customer', args: (id) => ({ filter: { customerId: id }, first: 20 }) },
        { target: 'customer', args: (id) => ({ filter: { customerId: id, overdue: true }, first: 20 }) },
        { args: () => ({ filter: { overdue: false }, first: 20 }) },
      ],
      'Mutation.creditNoteCreate': [{ target: 'bookedInvoice', args: (id) => ({ invoiceId: id }) }],
      'Mutation.invoiceBook': [byId('draftInvoice')],
      'Mutation.invoiceCreate': [
        { target: 'customer', args: (id) => ({ input: { customerId: id, date: INVOICE_DATE } }) },
        {
          target: 'taxCode',
          args: (code, own) => ({
            input: { customerId: own.customer, date: INVOICE_DATE, items: [{ ...item, taxCode: code }] },
          }),
        },
        {
          target: 'productHandle',
          args: (handle, own) => ({
            input: {
              customerId: own.customer,
              date: INVOICE_DATE,
              items: [{ quantity: 1, unitAmount: 100, sku: handle }],
            },
          }),
        },
      ],
      'Mutation.invoiceDelete': [byId('draftInvoice')],
      'Mutation.invoiceItemAdd': [
        { target: 'draftInvoice', args: (id) => ({ invoiceId: id, input: item }) },
        {
          target: 'taxCode',
          args: (code, own) => ({ invoiceId: own.draftInvoice, input: { ...item, taxCode: code } }),
        },
      ],
      'Mutation.invoiceItemRemove': [byId('invoiceItem')],
      'Mutation.invoiceItemUpdate': [
        { target: 'invoiceItem', args: (id) => ({ id, input: { title: 'Changed' } }) },
        { target: 'taxCode', args: (code, own) => ({ id: own.invoiceItem, input: { taxCode: code } }) },
      ],
      'Mutation.invoiceSettle': [
        { target: 'bookedInvoice', args: (id) => ({ id, input: { amount: 100, date: INVOICE_DATE } }) },
      ],
      'Mutation.invoiceVoid': [byId('bookedInvoice')],
      'Mutation.invoiceMarkUncollectible': [byId('bookedInvoice')],
      'Mutation.settlementReverse': [
        { target: 'settlement', args: (id) => ({ settlementId: id, reason: 'Matrix' }) },
      ],
      'Mutation.invoiceUpdate': [
        { target: 'draftInvoice', args: (id) => ({ id, input: { memo: 'Changed' } }) },
      ],
    },
  },
  fuzz: {
    bodies: {
      'POST /invoices': ({ customerId }) => ({
        customerId,
        currency: 'EUR',
        date: '2026-03-01',
        dueDate: '2026-03-31',
        memo: 'Fuzz',
        items: [
          {
            quantity: 3,
            unitAmount: 1999.5,
            sku: 'fuzz-product',
            title: 'Requests',
            description: 'March',
            periodStart: '2026-03-01',
            periodEnd: '2026-03-31',
            taxCode: 'VAT25',
            discount: { percentage: 10, amount: 5 },
          },
          { quantity: 1, unitAmount: -500, title: 'Goodwill' },
        ],
      }),
    },
    existingIds: { invoiceId: (fixtures) => fixtures.invoiceId },
  },
};
