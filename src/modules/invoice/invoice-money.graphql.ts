import { builder } from '../../graphql/builder.ts';
import { reads } from '../../graphql/columns.ts';
import { MoneyRef } from '../../graphql/money.ts';
import { InvoiceRef } from './invoice.graphql.ts';
import { amountDue } from './invoice-collection.ts';

/** The invoice's totals as typed Money, beside the plain integers of invoice.graphql.ts. */
builder.objectFields(InvoiceRef, (t) => ({
  totalExclVatMoney: t.field({
    type: MoneyRef,
    description: 'totalExclVat with its currency and minor unit.',
    extensions: reads('totalExclVat', 'currency'),
    resolve: (invoice) => ({ amount: invoice.totalExclVat, currency: invoice.currency }),
  }),
  totalVatMoney: t.field({
    type: MoneyRef,
    description: 'totalVat with its currency and minor unit.',
    extensions: reads('totalVat', 'currency'),
    resolve: (invoice) => ({ amount: invoice.totalVat, currency: invoice.currency }),
  }),
  totalInclVatMoney: t.field({
    type: MoneyRef,
    description: 'totalInclVat with its currency and minor unit.',
    extensions: reads('totalInclVat', 'currency'),
    resolve: (invoice) => ({ amount: invoice.totalInclVat, currency: invoice.currency }),
  }),
  totalDueMoney: t.field({
    type: MoneyRef,
    description: 'totalDue with its currency and minor unit.',
    extensions: reads('voidedAt', 'totalInclVat', 'settledAmount', 'currency'),
    resolve: (invoice) => ({ amount: amountDue(invoice), currency: invoice.currency }),
  }),
}));
