import { builder } from '../../graphql/builder.ts';
import { reads } from '../../graphql/columns.ts';
import { TaxRoundingEnum } from '../environment/environment.graphql.ts';
import { TaxBehaviorEnum, TaxCategoryEnum, TaxExemptEnum } from '../tax/tax-policy.graphql.ts';
import { taxNoteOf } from '../tax/tax-policy.ts';
import { InvoiceItemRef, InvoiceRef } from './invoice.graphql.ts';
import { invoiceLoaders } from './invoice.reads.ts';
import { type TaxBreakdownRow, taxBreakdown } from './invoice.tax.ts';

const TaxBreakdownRowRef = builder.objectRef<TaxBreakdownRow>('TaxBreakdownRow').implement({
  description:
    'The lines of one tax code, rate and behaviour, summed: the VAT breakdown of EN 16931 (BG-23). ' +
    'Rows come lowest rate first; lines without a tax code last.',
  fields: (t) => ({
    taxCode: t.exposeString('taxCode', { nullable: true, description: 'Null for lines not taxable.' }),
    taxRate: t.float({
      nullable: true,
      description:
        'Percentage (7.5 is 7.5 %); 0 for an exempt or reverse-charge customer; null when not taxable.',
      resolve: (row) => (row.taxRate === null ? null : Number(row.taxRate)),
    }),
    taxBehavior: t.expose('taxBehavior', {
      type: TaxBehaviorEnum,
      description: 'Whether the lines’ amounts include the VAT (inclusive) or not (exclusive).',
    }),
    taxableAmount: t.expose('taxableAmount', { type: 'SafeInt', description: 'Σ line amount (net).' }),
    taxAmount: t.expose('taxAmount', {
      type: 'SafeInt',
      description: 'Σ line taxAmount: under document rounding the group’s VAT, rounded once.',
    }),
    category: t.expose('category', {
      type: TaxCategoryEnum,
      description: 'The EN 16931 VAT category (BT-118) the row is reported under.',
    }),
    exemptionReasonCode: t.exposeString('exemptionReasonCode', {
      nullable: true,
      description: 'CEF VATEX code: VATEX-EU-AE for reverse charge, VATEX-EU-O for lines not subject to VAT.',
    }),
    exemptionReason: t.exposeString('exemptionReason', {
      nullable: true,
      description: 'The exemption note in words (BT-120), e.g. reverse charge; null when none applies.',
    }),
  }),
});

builder.objectFields(InvoiceRef, (t) => ({
  taxRounding: t.expose('taxRounding', {
    type: TaxRoundingEnum,
    description:
      'The rounding the amounts were computed with: the environment’s, as it was when last computed.',
  }),
  taxExempt: t.expose('taxExempt', {
    type: TaxExemptEnum,
    description: 'The customer’s exemption the amounts were computed with; booked, it stays.',
  }),
  taxNote: t.string({
    nullable: true,
    description: 'The wording the law requires when no VAT is charged because of who the customer is.',
    extensions: reads('taxExempt'),
    resolve: (invoice) => taxNoteOf(invoice.taxExempt),
  }),
  taxBreakdown: t.field({
    type: [TaxBreakdownRowRef],
    description: 'VAT per tax code, rate and behaviour (docs/tax.md).',
    resolve: async (invoice, _args, ctx) =>
      taxBreakdown(await ctx.loaders.of(invoiceLoaders).itemsByInvoiceId.load(invoice.id), invoice.taxExempt),
  }),
}));

builder.objectField(InvoiceItemRef, 'taxBehavior', (t) =>
  t.expose('taxBehavior', {
    type: TaxBehaviorEnum,
    description: 'inclusive: amount + taxAmount is the gross quantity × unitAmount − discount.',
  }),
);
