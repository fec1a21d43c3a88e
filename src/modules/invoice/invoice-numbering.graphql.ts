import { builder } from '../../graphql/builder.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import { listCost } from '../../limits/query-cost.ts';
import { INVOICE_TYPES } from './invoice.entity.ts';
import { InvoiceTypeEnum } from './invoice.graphql.ts';
import { InvoiceNumberingInput } from './invoice.input.ts';
import { InvoiceNumberingService, type NumberingState } from './invoice-numbering.service.ts';

const InvoiceNumberingRef = builder.objectRef<NumberingState>('InvoiceNumbering').implement({
  description: 'How the numbers of one invoice type look in this environment.',
  fields: (t) => ({
    type: t.expose('type', { type: InvoiceTypeEnum }),
    prefix: t.exposeString('prefix'),
    lastNumber: t.expose('lastNumber', {
      type: 'SafeInt',
      description: 'The last number issued; 0 for none.',
    }),
    nextHandle: t.exposeString('nextHandle', { description: 'The handle the next booking gets.' }),
  }),
});

const InvoiceNumberingInputRef = builder
  .inputType('InvoiceNumberingUpdateInput', {
    fields: (t) => ({
      prefix: t.string({
        required: true,
        description: 'Up to 20 letters, digits or . _ / -, not ending with a digit (INV-, CN-, 2026/).',
      }),
    }),
  })
  .validate(InvoiceNumberingInput);

const InvoiceNumberingUpdatePayload = payloadType(
  'InvoiceNumberingUpdatePayload',
  'numbering',
  InvoiceNumberingRef,
);

builder.queryFields((t) => ({
  invoiceNumbering: t.field({
    type: [InvoiceNumberingRef],
    description: 'The numbering of each invoice type in this environment.',
    complexity: listCost(INVOICE_TYPES.length),
    resolve: (_root, _args, ctx) => new InvoiceNumberingService(ctx).list(),
  }),
}));

builder.mutationFields((t) => ({
  invoiceNumberingUpdate: t.field({
    type: InvoiceNumberingUpdatePayload,
    description: 'Sets the prefix of the next numbers of an invoice type in this environment.',
    args: {
      type: t.arg({ type: InvoiceTypeEnum, required: true }),
      input: t.arg({ type: InvoiceNumberingInputRef, required: true }),
    },
    resolve: (_root, { type, input }, ctx) =>
      withUserErrors('numbering', () => new InvoiceNumberingService(ctx).update(type, input)),
  }),
}));
