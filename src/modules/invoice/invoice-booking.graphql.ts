import { builder } from '../../graphql/builder.ts';
import { payloadType, type UserError, UserErrorRef, withUserErrors } from '../../graphql/user-errors.ts';
import { CreditNoteInput } from './credit-note.input.ts';
import { CreditNoteService } from './credit-note.service.ts';
import type { Invoice, Settlement } from './invoice.entity.ts';
import { CREDIT_OUTCOMES, CREDIT_REASONS } from './invoice.entity.ts';
import { InvoiceRef, SettlementRef } from './invoice.graphql.ts';
import { SettlementInput } from './invoice.input.ts';
import { InvoiceBookingService } from './invoice-booking.service.ts';
import { InvoiceSettlementService } from './invoice-settlement.service.ts';

const InvoiceSettleInputRef = builder
  .inputType('InvoiceSettleInput', {
    fields: (t) => ({
      date: t.field({ type: 'Date', required: true }),
      amount: t.field({
        type: 'SafeInt',
        required: true,
        description:
          'Minor units: more than 0, or less than 0 (money paid out) when the invoice total is negative.',
      }),
      reference: t.string(),
      note: t.string(),
    }),
  })
  .validate(SettlementInput);

const CreditReasonEnum = builder.enumType('CreditReason', { values: CREDIT_REASONS });
const CreditOutcomeEnum = builder.enumType('CreditOutcome', { values: CREDIT_OUTCOMES });

builder.objectFields(InvoiceRef, (t) => ({
  creditReason: t.expose('creditReason', { type: CreditReasonEnum, nullable: true }),
  creditOutcome: t.expose('creditOutcome', {
    type: CreditOutcomeEnum,
    nullable: true,
    description: 'On a credit note: what booking it does with its total.',
  }),
}));

const CreditNoteLineInputRef = builder.inputType('CreditNoteLineInput', {
  description: 'Part of an invoice line: either quantity (of its units) or amount (net, minor units).',
  fields: (t) => ({
    itemId: t.field({ type: 'UUID', required: true }),
    quantity: t.float(),
    amount: t.field({ type: 'SafeInt' }),
  }),
});

const CreditNoteFreeLineInputRef = builder.inputType('CreditNoteFreeLineInput', {
  description: 'A line crediting no invoice line (goodwill); net amount in minor units.',
  fields: (t) => ({
    title: t.string({ required: true }),
    amount: t.field({ type: 'SafeInt', required: true }),
    taxCode: t.string(),
  }),
});

const CreditNoteCreateInputRef = builder
  .inputType('CreditNoteCreateInput', {
    fields: (t) => ({
      itemIds: t.field({
        type: ['UUID'],
        description:
          'Lines of the invoice to credit, each in full (what is left of it); all lines not yet credited when itemIds, lines and freeLines are left out.',
      }),
      lines: t.field({
        type: [CreditNoteLineInputRef],
        description: 'Lines credited in part; never more than is left to credit of each.',
      }),
      freeLines: t.field({ type: [CreditNoteFreeLineInputRef] }),
      reason: t.field({
        type: CreditReasonEnum,
        description: 'Defaults to other.',
      }),
      outcome: t.field({
        type: CreditOutcomeEnum,
        description: 'What booking does with the total; defaults to settle_invoice.',
      }),
      date: t.field({ type: 'Date', description: 'Defaults to today (UTC).' }),
      memo: t.string(),
    }),
  })
  .validate(CreditNoteInput);

type Payload<T> = { result: T | null; userErrors: UserError[] };

const InvoiceBookPayload = payloadType('InvoiceBookPayload', 'invoice', InvoiceRef);
const CreditNoteCreatePayload = payloadType('CreditNoteCreatePayload', 'creditNote', InvoiceRef);

const InvoiceSettlePayload = builder
  .objectRef<Payload<{ invoice: Invoice; settlement: Settlement }>>('InvoiceSettlePayload')
  .implement({
    fields: (t) => ({
      invoice: t.field({
        type: InvoiceRef,
        nullable: true,
        resolve: (payload) => payload.result?.invoice ?? null,
      }),
      settlement: t.field({
        type: SettlementRef,
        nullable: true,
        resolve: (payload) => payload.result?.settlement ?? null,
      }),
      userErrors: t.field({
        type: [UserErrorRef],
        description: 'Why the mutation changed nothing; empty when it succeeded.',
        resolve: (payload) => payload.userErrors,
      }),
    }),
  });

builder.mutationFields((t) => ({
  invoiceBook: t.field({
    type: InvoiceBookPayload,
    description: 'Books a draft: assigns the next gapless number and freezes the customer onto it.',
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => withUserErrors('invoice', () => new InvoiceBookingService(ctx).book(id)),
  }),
  invoiceSettle: t.field({
    type: InvoiceSettlePayload,
    description: 'Records a payment (or other settlement) of a booked invoice.',
    args: {
      id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }),
      input: t.arg({
        type: InvoiceSettleInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('result', () => new InvoiceSettlementService(ctx).settle(id, input)),
  }),
  creditNoteCreate: t.field({
    type: CreditNoteCreatePayload,
    description: 'Creates a draft credit note for some or all lines of a booked invoice.',
    args: {
      invoiceId: t.arg({ type: 'UUID', required: true, description: 'The invoice’s id.' }),
      input: t.arg({ type: CreditNoteCreateInputRef }),
    },
    resolve: (_root, { invoiceId, input }, ctx) =>
      withUserErrors('creditNote', () => new CreditNoteService(ctx).create(invoiceId, input ?? {})),
  }),
}));
