import { builder } from '../../graphql/builder.ts';
import { payloadType, type UserError, UserErrorRef, withUserErrors } from '../../graphql/user-errors.ts';
import { TaxBehaviorEnum } from '../tax/tax-policy.graphql.ts';
import type { Invoice, InvoiceItem } from './invoice.entity.ts';
import { InvoiceItemRef, InvoiceRef } from './invoice.graphql.ts';
import {
  InvoiceCreateInput,
  InvoiceItemInput,
  InvoiceItemUpdateInput,
  InvoiceUpdateInput,
} from './invoice.input.ts';
import { InvoiceDraftService } from './invoice-drafts.service.ts';

const InvoiceItemDiscountInputRef = builder.inputType('InvoiceItemDiscountInput', {
  description: 'A discount on a line: a percentage or an amount.',
  fields: (t) => ({
    percentage: t.float({ description: '0 to 100; 10 is 10 %.' }),
    amount: t.float({ description: 'Minor units.' }),
  }),
});

const InvoiceItemInputRef = builder.inputType('InvoiceItemInput', {
  description: 'When sku is the handle of a product, a missing title, description and taxCode come from it.',
  fields: (t) => ({
    quantity: t.float({ required: true, description: 'The quantity billed (up to 6 decimals).' }),
    unitAmount: t.float({ required: true, description: 'Minor units; may be fractional.' }),
    sku: t.string({ description: 'The article number, as printed.' }),
    title: t.string({ description: 'The line’s title, as printed.' }),
    description: t.string({ description: 'More text under the title.' }),
    periodStart: t.field({ type: 'Date', description: 'First day the line covers (ISO 8601 date).' }),
    periodEnd: t.field({ type: 'Date', description: 'Last day the line covers (ISO 8601 date).' }),
    taxCode: t.string({ description: 'Code of a tax code of this environment; none means not taxable.' }),
    discount: t.field({ type: InvoiceItemDiscountInputRef, description: 'A discount on the line.' }),
    taxBehavior: t.field({
      type: TaxBehaviorEnum,
      description:
        'inclusive: quantity × unitAmount − discount is the gross, tax included. Default exclusive.',
    }),
  }),
});

const InvoiceItemUpdateInputRef = builder.inputType('InvoiceItemUpdateInput', {
  description:
    'Fields left out stay as they are; fields set to null are cleared. A new taxCode brings its rate.',
  fields: (t) => ({
    quantity: t.float({ description: 'A new quantity (up to 6 decimals).' }),
    unitAmount: t.float({ description: 'A new price of one unit, in minor units.' }),
    sku: t.string({ description: 'A new article number; null clears it.' }),
    title: t.string({ description: 'A new title.' }),
    description: t.string({ description: 'New text under the title; null clears it.' }),
    periodStart: t.field({
      type: 'Date',
      description: 'A new first day covered (ISO 8601 date); null clears it.',
    }),
    periodEnd: t.field({
      type: 'Date',
      description: 'A new last day covered (ISO 8601 date); null clears it.',
    }),
    taxCode: t.string({ description: 'A new tax code; null makes the line untaxed.' }),
    discount: t.field({ type: InvoiceItemDiscountInputRef, description: 'A new discount; null clears it.' }),
    taxBehavior: t.field({
      type: TaxBehaviorEnum,
      description: 'Whether the new unit amount includes tax or not.',
    }),
  }),
});

const InvoiceCreateInputRef = builder
  .inputType('InvoiceCreateInput', {
    description: 'A new draft invoice for a customer.',
    fields: (t) => ({
      customerId: t.field({ type: 'UUID', required: true, description: 'The customer’s id.' }),
      currency: t.string({ description: "Defaults to the customer's currency." }),
      date: t.field({ type: 'Date', required: true, description: 'The invoice date (ISO 8601 date).' }),
      dueDate: t.field({
        type: 'Date',
        description: "Defaults to date + N days of the customer's net<N> term.",
      }),
      memo: t.string({ description: 'A note printed on the invoice.' }),
      items: t.field({ type: [InvoiceItemInputRef], description: 'Its lines; none when left out.' }),
    }),
  })
  .validate(InvoiceCreateInput);

const InvoiceUpdateInputRef = builder
  .inputType('InvoiceUpdateInput', {
    description: 'Fields left out stay as they are; dueDate and memo set to null are cleared.',
    fields: (t) => ({
      date: t.field({ type: 'Date', description: 'A new invoice date (ISO 8601 date).' }),
      dueDate: t.field({ type: 'Date', description: 'A new due date (ISO 8601 date); null clears it.' }),
      memo: t.string({ description: 'A new note; null clears it.' }),
      currency: t.string({ description: 'A new currency (ISO 4217, either case).' }),
    }),
  })
  .validate(InvoiceUpdateInput);

type ItemResult = { invoice: Invoice; item: InvoiceItem };
type Payload<T> = { result: T | null; userErrors: UserError[] };

/** A payload carrying the changed invoice and the item the mutation was about. */
function itemPayloadType(name: string) {
  return builder.objectRef<Payload<ItemResult>>(name).implement({
    description:
      'What the mutation answers: the invoice and the line it was about, or the userErrors that refused it.',
    fields: (t) => ({
      invoice: t.field({
        description: 'The invoice as the mutation left it; null when userErrors is not empty.',
        type: InvoiceRef,
        nullable: true,
        resolve: (payload) => payload.result?.invoice ?? null,
      }),
      invoiceItem: t.field({
        description: 'The line the mutation was about; null when userErrors is not empty.',
        type: InvoiceItemRef,
        nullable: true,
        resolve: (payload) => payload.result?.item ?? null,
      }),
      userErrors: t.field({
        type: [UserErrorRef],
        description: 'Why the mutation changed nothing; empty when it succeeded.',
        resolve: (payload) => payload.userErrors,
      }),
    }),
  });
}

const InvoiceCreatePayload = payloadType('InvoiceCreatePayload', 'invoice', InvoiceRef);
const InvoiceUpdatePayload = payloadType('InvoiceUpdatePayload', 'invoice', InvoiceRef);
const InvoiceItemAddPayload = itemPayloadType('InvoiceItemAddPayload');
const InvoiceItemUpdatePayload = itemPayloadType('InvoiceItemUpdatePayload');
const InvoiceItemRemovePayload = payloadType('InvoiceItemRemovePayload', 'invoice', InvoiceRef);
const InvoiceDeletePayload = builder.objectRef<Payload<string>>('InvoiceDeletePayload').implement({
  description: 'What invoiceDelete answers: the id of the deleted draft, or the userErrors that refused it.',
  fields: (t) => ({
    deletedInvoiceId: t.field({
      type: 'UUID',
      nullable: true,
      resolve: (payload) => payload.result,
      description: 'The id of the deleted draft; null when userErrors is not empty.',
    }),
    userErrors: t.field({
      type: [UserErrorRef],
      description: 'Why the mutation changed nothing; empty when it succeeded.',
      resolve: (payload) => payload.userErrors,
    }),
  }),
});

builder.mutationFields((t) => ({
  invoiceCreate: t.field({
    type: InvoiceCreatePayload,
    description: 'Creates a draft invoice.',
    args: {
      input: t.arg({
        type: InvoiceCreateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('invoice', () => new InvoiceDraftService(ctx).create(input)),
  }),
  invoiceUpdate: t.field({
    description: 'Changes a draft invoice’s date, due date, memo or currency.',
    type: InvoiceUpdatePayload,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }),
      input: t.arg({
        type: InvoiceUpdateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('invoice', () => new InvoiceDraftService(ctx).update(id, input)),
  }),
  invoiceItemAdd: t.field({
    description: 'Adds a line to a draft invoice.',
    type: InvoiceItemAddPayload,
    args: {
      invoiceId: t.arg({ type: 'UUID', required: true, description: 'The invoice’s id.' }),
      input: t
        .arg({
          type: InvoiceItemInputRef,
          required: true,
          description: 'The values to write (see the input type).',
        })
        .validate(InvoiceItemInput),
    },
    resolve: (_root, { invoiceId, input }, ctx) =>
      withUserErrors('result', () => new InvoiceDraftService(ctx).addItem(invoiceId, input)),
  }),
  invoiceItemUpdate: t.field({
    description: 'Changes a line of a draft invoice.',
    type: InvoiceItemUpdatePayload,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }),
      input: t
        .arg({
          type: InvoiceItemUpdateInputRef,
          required: true,
          description: 'The values to write (see the input type).',
        })
        .validate(InvoiceItemUpdateInput),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('result', () => new InvoiceDraftService(ctx).updateItem(id, input)),
  }),
  invoiceItemRemove: t.field({
    description: 'Removes a line from a draft invoice.',
    type: InvoiceItemRemovePayload,
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) =>
      withUserErrors('invoice', () => new InvoiceDraftService(ctx).removeItem(id)),
  }),
  invoiceDelete: t.field({
    type: InvoiceDeletePayload,
    description: 'Deletes a draft.',
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => withUserErrors('result', () => new InvoiceDraftService(ctx).delete(id)),
  }),
}));
