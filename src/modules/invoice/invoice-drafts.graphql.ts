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
  fields: (t) => ({
    percentage: t.float({ description: '0 to 100; 10 is 10 %.' }),
    amount: t.float({ description: 'Minor units.' }),
  }),
});

const InvoiceItemInputRef = builder.inputType('InvoiceItemInput', {
  description: 'When sku is the handle of a product, a missing title, description and taxCode come from it.',
  fields: (t) => ({
    quantity: t.float({ required: true }),
    unitAmount: t.float({ required: true, description: 'Minor units; may be fractional.' }),
    sku: t.string(),
    title: t.string(),
    description: t.string(),
    periodStart: t.field({ type: 'Date' }),
    periodEnd: t.field({ type: 'Date' }),
    taxCode: t.string({ description: 'Code of a tax code of this environment; none means not taxable.' }),
    discount: t.field({ type: InvoiceItemDiscountInputRef }),
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
    quantity: t.float(),
    unitAmount: t.float(),
    sku: t.string(),
    title: t.string(),
    description: t.string(),
    periodStart: t.field({ type: 'Date' }),
    periodEnd: t.field({ type: 'Date' }),
    taxCode: t.string(),
    discount: t.field({ type: InvoiceItemDiscountInputRef }),
    taxBehavior: t.field({ type: TaxBehaviorEnum }),
  }),
});

const InvoiceCreateInputRef = builder
  .inputType('InvoiceCreateInput', {
    fields: (t) => ({
      customerId: t.field({ type: 'UUID', required: true }),
      currency: t.string({ description: "Defaults to the customer's currency." }),
      date: t.field({ type: 'Date', required: true }),
      dueDate: t.field({
        type: 'Date',
        description: "Defaults to date + N days of the customer's net<N> term.",
      }),
      memo: t.string(),
      items: t.field({ type: [InvoiceItemInputRef] }),
    }),
  })
  .validate(InvoiceCreateInput);

const InvoiceUpdateInputRef = builder
  .inputType('InvoiceUpdateInput', {
    description: 'Fields left out stay as they are; dueDate and memo set to null are cleared.',
    fields: (t) => ({
      date: t.field({ type: 'Date' }),
      dueDate: t.field({ type: 'Date' }),
      memo: t.string(),
      currency: t.string(),
    }),
  })
  .validate(InvoiceUpdateInput);

type ItemResult = { invoice: Invoice; item: InvoiceItem };
type Payload<T> = { result: T | null; userErrors: UserError[] };

/** A payload carrying the changed invoice and the item the mutation was about. */
function itemPayloadType(name: string) {
  return builder.objectRef<Payload<ItemResult>>(name).implement({
    fields: (t) => ({
      invoice: t.field({
        type: InvoiceRef,
        nullable: true,
        resolve: (payload) => payload.result?.invoice ?? null,
      }),
      invoiceItem: t.field({
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
  fields: (t) => ({
    deletedInvoiceId: t.field({ type: 'UUID', nullable: true, resolve: (payload) => payload.result }),
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
