import { builder } from '../../graphql/builder.ts';
import { payloadType, type UserError, UserErrorRef, withUserErrors } from '../../graphql/user-errors.ts';
import { CreditNoteService } from './credit-note.service.ts';
import type { Invoice, Settlement } from './invoice.entity.ts';
import { InvoiceRef, SettlementRef } from './invoice.graphql.ts';
import { CreditNoteCreateInput, SettlementInput } from './invoice.input.ts';
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

const CreditNoteCreateInputRef = builder
  .inputType('CreditNoteCreateInput', {
    fields: (t) => ({
      itemIds: t.field({
        type: ['UUID'],
        description:
          'Lines of the invoice to credit, each in full; all lines not yet credited when left out.',
      }),
      date: t.field({ type: 'Date', description: 'Defaults to today (UTC).' }),
      memo: t.string(),
    }),
  })
  .validate(CreditNoteCreateInput);

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
      userErrors: t.field({ type: [UserErrorRef], resolve: (payload) => payload.userErrors }),
    }),
  });

builder.mutationFields((t) => ({
  invoiceBook: t.field({
    type: InvoiceBookPayload,
    description: 'Books a draft: assigns the next gapless number and freezes the customer onto it.',
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (_root, { id }, ctx) => withUserErrors('invoice', () => new InvoiceBookingService(ctx).book(id)),
  }),
  invoiceSettle: t.field({
    type: InvoiceSettlePayload,
    description: 'Records a payment (or other settlement) of a booked invoice.',
    args: {
      id: t.arg({ type: 'UUID', required: true }),
      input: t.arg({ type: InvoiceSettleInputRef, required: true }),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('result', () => new InvoiceSettlementService(ctx).settle(id, input)),
  }),
  creditNoteCreate: t.field({
    type: CreditNoteCreatePayload,
    description: 'Creates a draft credit note for some or all lines of a booked invoice.',
    args: {
      invoiceId: t.arg({ type: 'UUID', required: true }),
      input: t.arg({ type: CreditNoteCreateInputRef }),
    },
    resolve: (_root, { invoiceId, input }, ctx) =>
      withUserErrors('creditNote', () => new CreditNoteService(ctx).create(invoiceId, input ?? {})),
  }),
}));
