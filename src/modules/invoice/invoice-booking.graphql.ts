import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
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
    description: 'A settlement to record: money received for (or paid out on) a booked invoice.',
    fields: (t) => ({
      date: t.field({ type: 'Date', required: true, description: 'The day it was settled (ISO 8601 date).' }),
      amount: t.field({
        type: 'SafeInt',
        required: true,
        description:
          'Minor units: more than 0, or less than 0 (money paid out) when the invoice total is negative.',
      }),
      reference: t.string({
        description: 'The payment’s reference (e.g. a bank transaction id); none when left out.',
      }),
      note: t.string({ description: 'A note for people; none when left out.' }),
    }),
  })
  .validate(SettlementInput);

const CreditReasonEnum = builder.enumType('CreditReason', {
  description: 'Why a credit note credits its invoice.',
  values: describedValues(CREDIT_REASONS, {
    duplicate: 'The invoice billed something twice.',
    fraudulent: 'The charge was fraudulent.',
    order_change: 'The order changed after it was invoiced.',
    product_unsatisfactory: 'The customer was not satisfied with the product.',
    other: 'Any other reason.',
  }),
});
const CreditOutcomeEnum = builder.enumType('CreditOutcome', {
  description: 'What booking a credit note does with its total.',
  values: describedValues(CREDIT_OUTCOMES, {
    settle_invoice: 'The credit settles the credited invoice.',
    credit_balance: 'The credit goes to the customer’s balance, for later invoices.',
    refund: 'The credit is owed back to the customer as a refund.',
  }),
});

builder.objectFields(InvoiceRef, (t) => ({
  creditReason: t.expose('creditReason', {
    type: CreditReasonEnum,
    nullable: true,
    description: 'Why a credit note credits its invoice; null for an invoice.',
  }),
  creditOutcome: t.expose('creditOutcome', {
    type: CreditOutcomeEnum,
    nullable: true,
    description: 'On a credit note: what booking it does with its total.',
  }),
}));

const CreditNoteLineInputRef = builder.inputType('CreditNoteLineInput', {
  description: 'Part of an invoice line: either quantity (of its units) or amount (net, minor units).',
  fields: (t) => ({
    itemId: t.field({ type: 'UUID', required: true, description: 'The invoice line credited.' }),
    quantity: t.float({ description: 'How many of the line’s units are credited.' }),
    amount: t.field({ type: 'SafeInt', description: 'The net amount credited, in minor units.' }),
  }),
});

const CreditNoteFreeLineInputRef = builder.inputType('CreditNoteFreeLineInput', {
  description: 'A line crediting no invoice line (goodwill); net amount in minor units.',
  fields: (t) => ({
    title: t.string({ required: true, description: 'The line’s title, as printed.' }),
    amount: t.field({
      type: 'SafeInt',
      required: true,
      description: 'The net amount credited, in minor units.',
    }),
    taxCode: t.string({ description: 'The tax code the line is taxed by; untaxed when left out.' }),
  }),
});

const CreditNoteCreateInputRef = builder
  .inputType('CreditNoteCreateInput', {
    description: 'A credit note for (part of) a booked invoice.',
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
      freeLines: t.field({
        type: [CreditNoteFreeLineInputRef],
        description: 'Lines crediting no invoice line (goodwill).',
      }),
      reason: t.field({
        type: CreditReasonEnum,
        description: 'Defaults to other.',
      }),
      outcome: t.field({
        type: CreditOutcomeEnum,
        description: 'What booking does with the total; defaults to settle_invoice.',
      }),
      date: t.field({ type: 'Date', description: 'Defaults to today (UTC).' }),
      memo: t.string({ description: 'A note printed on the credit note; none when left out.' }),
    }),
  })
  .validate(CreditNoteInput);

type Payload<T> = { result: T | null; userErrors: UserError[] };

const InvoiceBookPayload = payloadType('InvoiceBookPayload', 'invoice', InvoiceRef);
const CreditNoteCreatePayload = payloadType('CreditNoteCreatePayload', 'creditNote', InvoiceRef);

const InvoiceSettlePayload = builder
  .objectRef<Payload<{ invoice: Invoice; settlement: Settlement }>>('InvoiceSettlePayload')
  .implement({
    description:
      'What invoiceSettle answers: the invoice and the settlement recorded, or the userErrors that refused it.',
    fields: (t) => ({
      invoice: t.field({
        description: 'The invoice as it is after the settlement; null when userErrors is not empty.',
        type: InvoiceRef,
        nullable: true,
        resolve: (payload) => payload.result?.invoice ?? null,
      }),
      settlement: t.field({
        description: 'The settlement recorded; null when userErrors is not empty.',
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
      input: t.arg({
        type: CreditNoteCreateInputRef,
        description: 'What to credit; every line not yet credited when left out.',
      }),
    },
    resolve: (_root, { invoiceId, input }, ctx) =>
      withUserErrors('creditNote', () => new CreditNoteService(ctx).create(invoiceId, input ?? {})),
  }),
}));
