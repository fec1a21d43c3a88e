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
    type: t.expose('type', { type: InvoiceTypeEnum, description: 'The documents this series numbers.' }),
    prefix: t.exposeString('prefix', { description: 'What every number of the series starts with.' }),
    pattern: t.exposeString('pattern', {
      description:
        'The number pattern: text with {YYYY}, {YY}, {MM} (of the invoice date) and {SEQ:n}; a prefix alone gives <prefix>{SEQ:6}.',
    }),
    yearlyReset: t.exposeBoolean('yearlyReset', {
      description: 'Whether the sequence starts again at 1 for each year of invoice dates.',
    }),
    lastNumber: t.expose('lastNumber', {
      type: 'SafeInt',
      description: 'The last number issued (with a yearly reset: in this year); 0 for none.',
    }),
    nextHandle: t.exposeString('nextHandle', { description: 'The handle the next booking gets.' }),
  }),
});

const InvoiceNumberingInputRef = builder
  .inputType('InvoiceNumberingUpdateInput', {
    description: 'How a series numbers from now on; numbers already given never change.',
    fields: (t) => ({
      prefix: t.string({
        required: false,
        description:
          'Up to 20 letters, digits or . _ / -, not ending with a digit (INV-, CN-, 2026/); numbers are the prefix and six digits.',
      }),
      pattern: t.string({
        required: false,
        description:
          'Instead of a prefix: a pattern such as INV-{YYYY}-{SEQ:6}, with tokens {YYYY}, {YY}, {MM} and {SEQ:n} (n 1 to 12) and letters, digits or . _ / - between them. Coded errors: UNKNOWN_TOKEN, MISSING_SEQUENCE, PATTERN_TOO_LONG.',
      }),
      yearlyReset: t.boolean({
        required: false,
        description:
          'Start the sequence again at 1 for each year of invoice dates; the pattern must then name the year (MISSING_YEAR).',
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
    description:
      'Sets how the next numbers of an invoice type look in this environment (prefix or pattern, yearly reset); issued numbers keep theirs.',
    args: {
      type: t.arg({ type: InvoiceTypeEnum, required: true, description: 'The series to change.' }),
      input: t.arg({
        type: InvoiceNumberingInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { type, input }, ctx) =>
      withUserErrors('numbering', () => new InvoiceNumberingService(ctx).update(type, input)),
  }),
}));
