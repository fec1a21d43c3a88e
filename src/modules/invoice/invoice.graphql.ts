import { builder } from '../../graphql/builder.ts';
import { payloadType, type UserError, UserErrorRef, withUserErrors } from '../../graphql/user-errors.ts';
import { LIST_BOUNDS, listCost } from '../../limits/query-cost.ts';
import { BillingAddressRef, CustomerRef } from '../customer/customer.graphql.ts';
import { SETTLEMENT_STATUSES, totalDue } from './invoice.arithmetic.ts';
import {
  INVOICE_STATUSES,
  INVOICE_TYPES,
  type Invoice,
  type InvoiceCustomer,
  type InvoiceItem,
  type Settlement,
} from './invoice.entity.ts';
import {
  CreditNoteCreateInput,
  InvoiceCreateInput,
  InvoiceFilter,
  InvoiceItemInput,
  InvoiceItemUpdateInput,
  InvoiceNumberingInput,
  InvoiceUpdateInput,
  SettlementInput,
} from './invoice.input.ts';
import { InvoiceService } from './invoice.service.ts';
import { InvoiceNumberingService, type NumberingState } from './invoice-numbering.service.ts';

export const InvoiceTypeEnum = builder.enumType('InvoiceType', { values: INVOICE_TYPES });
export const InvoiceStatusEnum = builder.enumType('InvoiceStatus', { values: INVOICE_STATUSES });
export const SettlementStatusEnum = builder.enumType('SettlementStatus', { values: SETTLEMENT_STATUSES });

const InvoiceCustomerRef = builder.objectRef<InvoiceCustomer>('InvoiceCustomer').implement({
  description: 'The customer as the invoice names it: frozen when booked, the live customer while a draft.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    handle: t.exposeString('handle', { nullable: true }),
    name: t.exposeString('name'),
    billingAddress: t.expose('billingAddress', { type: BillingAddressRef }),
  }),
});

const InvoiceItemTaxRef = builder.objectRef<InvoiceItem>('InvoiceItemTax').implement({
  fields: (t) => ({
    taxable: t.boolean({ resolve: (item) => item.taxCode != null }),
    taxCode: t.exposeString('taxCode', { nullable: true }),
    taxRate: t.float({
      nullable: true,
      description: 'Percentage (25 is 25 %), as the tax code had it when the line got it.',
      resolve: (item) => (item.taxRate == null ? null : Number(item.taxRate)),
    }),
  }),
});

const InvoiceItemDiscountRef = builder.objectRef<InvoiceItem>('InvoiceItemDiscount').implement({
  fields: (t) => ({
    percentage: t.float({ description: '10 is 10 %.', resolve: (item) => Number(item.discountPercentage) }),
    amount: t.float({ description: 'Minor units.', resolve: (item) => Number(item.discountAmount) }),
  }),
});

export const InvoiceItemRef = builder.objectRef<InvoiceItem>('InvoiceItem').implement({
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    quantity: t.float({ resolve: (item) => Number(item.quantity) }),
    unitAmount: t.float({
      description: 'Minor units; may be fractional (0.25 cents per call).',
      resolve: (item) => Number(item.unitAmount),
    }),
    sku: t.exposeString('sku', { nullable: true }),
    title: t.exposeString('title'),
    description: t.exposeString('description', { nullable: true }),
    periodStart: t.expose('periodStart', { type: 'Date', nullable: true }),
    periodEnd: t.expose('periodEnd', { type: 'Date', nullable: true }),
    amount: t.expose('amount', {
      type: 'SafeInt',
      description: 'round(quantity × unitAmount − discount), in minor units.',
    }),
    taxAmount: t.expose('taxAmount', { type: 'SafeInt', description: 'round(amount × taxRate / 100).' }),
    tax: t.field({ type: InvoiceItemTaxRef, resolve: (item) => item }),
    discount: t.field({ type: InvoiceItemDiscountRef, resolve: (item) => item }),
    creditedItemId: t.expose('creditedItemId', {
      type: 'UUID',
      nullable: true,
      description: 'On a credit note: the invoice line this line credits.',
    }),
  }),
});

export const SettlementRef = builder.objectRef<Settlement>('Settlement').implement({
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    date: t.expose('date', { type: 'Date' }),
    amount: t.expose('amount', { type: 'SafeInt' }),
    reference: t.exposeString('reference', { nullable: true }),
    note: t.exposeString('note', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

export const InvoiceRef = builder.objectRef<Invoice>('Invoice');

InvoiceRef.implement({
  description: 'An invoice or a credit note. Amounts are integers in the minor unit of its currency.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    handle: t.exposeString('handle', { nullable: true, description: 'The gapless number, once booked.' }),
    type: t.expose('type', { type: InvoiceTypeEnum }),
    status: t.expose('status', { type: InvoiceStatusEnum }),
    settlementStatus: t.expose('settlementStatus', { type: SettlementStatusEnum }),
    currency: t.exposeString('currency'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', nullable: true }),
    bookedAt: t.expose('bookedAt', { type: 'DateTime', nullable: true }),
    customer: t.field({
      type: InvoiceCustomerRef,
      resolve: (invoice, _args, ctx) => new InvoiceService(ctx).customerOf(invoice),
    }),
    memo: t.exposeString('memo', { nullable: true }),
    date: t.expose('date', { type: 'Date' }),
    dueDate: t.expose('dueDate', { type: 'Date', nullable: true }),
    items: t.field({
      type: [InvoiceItemRef],
      complexity: listCost(LIST_BOUNDS.invoiceItems),
      resolve: (invoice, _args, ctx) => ctx.loaders.itemsByInvoiceId.load(invoice.id),
    }),
    settlements: t.field({
      type: [SettlementRef],
      complexity: listCost(LIST_BOUNDS.settlements),
      resolve: (invoice, _args, ctx) => ctx.loaders.settlementsByInvoiceId.load(invoice.id),
    }),
    creditedInvoice: t.field({
      type: InvoiceRef,
      nullable: true,
      description: 'On a credit note: the invoice it credits.',
      resolve: (invoice, _args, ctx) =>
        invoice.creditedInvoiceId ? ctx.loaders.invoiceById.load(invoice.creditedInvoiceId) : null,
    }),
    totalExclVat: t.expose('totalExclVat', { type: 'SafeInt', description: 'Σ item amount.' }),
    totalVat: t.expose('totalVat', { type: 'SafeInt', description: 'Σ item taxAmount.' }),
    totalInclVat: t.expose('totalInclVat', { type: 'SafeInt' }),
    totalDue: t.field({
      type: 'SafeInt',
      description: 'totalInclVat − Σ settlements; negative when over-settled.',
      resolve: (invoice) => totalDue(invoice.totalInclVat, invoice.settledAmount),
    }),
  }),
});

const InvoiceConnectionRef = builder.connectionObject(
  { type: InvoiceRef, name: 'InvoiceConnection' },
  { name: 'InvoiceEdge' },
);

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

const InvoiceFilterRef = builder
  .inputType('InvoiceFilter', {
    fields: (t) => ({
      customerId: t.field({ type: 'UUID' }),
      type: t.field({ type: InvoiceTypeEnum }),
      status: t.field({ type: InvoiceStatusEnum }),
      settlementStatus: t.field({ type: SettlementStatusEnum }),
      dateFrom: t.field({ type: 'Date', description: 'Invoices dated on or after this day.' }),
      dateTo: t.field({ type: 'Date', description: 'Invoices dated on or before this day.' }),
    }),
  })
  .validate(InvoiceFilter);

const CustomerInvoiceFilterRef = builder
  .inputType('CustomerInvoiceFilter', {
    fields: (t) => ({
      type: t.field({ type: InvoiceTypeEnum }),
      status: t.field({ type: InvoiceStatusEnum }),
      settlementStatus: t.field({ type: SettlementStatusEnum }),
      dateFrom: t.field({ type: 'Date' }),
      dateTo: t.field({ type: 'Date' }),
    }),
  })
  .validate(InvoiceFilter);

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
      userErrors: t.field({ type: [UserErrorRef], resolve: (payload) => payload.userErrors }),
    }),
  });
}

const InvoiceCreatePayload = payloadType('InvoiceCreatePayload', 'invoice', InvoiceRef);
const InvoiceUpdatePayload = payloadType('InvoiceUpdatePayload', 'invoice', InvoiceRef);
const InvoiceItemAddPayload = itemPayloadType('InvoiceItemAddPayload');
const InvoiceItemUpdatePayload = itemPayloadType('InvoiceItemUpdatePayload');
const InvoiceItemRemovePayload = payloadType('InvoiceItemRemovePayload', 'invoice', InvoiceRef);
const InvoiceBookPayload = payloadType('InvoiceBookPayload', 'invoice', InvoiceRef);
const CreditNoteCreatePayload = payloadType('CreditNoteCreatePayload', 'creditNote', InvoiceRef);
const InvoiceNumberingUpdatePayload = payloadType(
  'InvoiceNumberingUpdatePayload',
  'numbering',
  InvoiceNumberingRef,
);

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

const InvoiceDeletePayload = builder.objectRef<Payload<string>>('InvoiceDeletePayload').implement({
  fields: (t) => ({
    deletedInvoiceId: t.field({ type: 'UUID', nullable: true, resolve: (payload) => payload.result }),
    userErrors: t.field({ type: [UserErrorRef], resolve: (payload) => payload.userErrors }),
  }),
});

builder.objectField(CustomerRef, 'invoices', (t) =>
  t.connection(
    {
      type: InvoiceRef,
      args: { filter: t.arg({ type: CustomerInvoiceFilterRef }) },
      resolve: (customer, { filter, ...page }, ctx) =>
        new InvoiceService(ctx).list({ ...filter, customerId: customer.id }, page),
    },
    InvoiceConnectionRef,
  ),
);

builder.queryFields((t) => ({
  invoice: t.field({
    type: InvoiceRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (_root, { id }, ctx) => ctx.loaders.invoiceById.load(id),
  }),
  invoices: t.connection(
    {
      type: InvoiceRef,
      args: { filter: t.arg({ type: InvoiceFilterRef }) },
      resolve: (_root, { filter, ...page }, ctx) => new InvoiceService(ctx).list(filter ?? {}, page),
    },
    InvoiceConnectionRef,
  ),
  invoiceNumbering: t.field({
    type: [InvoiceNumberingRef],
    description: 'The numbering of each invoice type in this environment.',
    complexity: listCost(INVOICE_TYPES.length),
    resolve: (_root, _args, ctx) => new InvoiceNumberingService(ctx).list(),
  }),
}));

builder.mutationFields((t) => ({
  invoiceCreate: t.field({
    type: InvoiceCreatePayload,
    description: 'Creates a draft invoice.',
    args: { input: t.arg({ type: InvoiceCreateInputRef, required: true }) },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('invoice', () => new InvoiceService(ctx).create(input)),
  }),
  invoiceUpdate: t.field({
    type: InvoiceUpdatePayload,
    args: {
      id: t.arg({ type: 'UUID', required: true }),
      input: t.arg({ type: InvoiceUpdateInputRef, required: true }),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('invoice', () => new InvoiceService(ctx).update(id, input)),
  }),
  invoiceItemAdd: t.field({
    type: InvoiceItemAddPayload,
    args: {
      invoiceId: t.arg({ type: 'UUID', required: true }),
      input: t.arg({ type: InvoiceItemInputRef, required: true }).validate(InvoiceItemInput),
    },
    resolve: (_root, { invoiceId, input }, ctx) =>
      withUserErrors('result', () => new InvoiceService(ctx).addItem(invoiceId, input)),
  }),
  invoiceItemUpdate: t.field({
    type: InvoiceItemUpdatePayload,
    args: {
      id: t.arg({ type: 'UUID', required: true }),
      input: t.arg({ type: InvoiceItemUpdateInputRef, required: true }).validate(InvoiceItemUpdateInput),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('result', () => new InvoiceService(ctx).updateItem(id, input)),
  }),
  invoiceItemRemove: t.field({
    type: InvoiceItemRemovePayload,
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (_root, { id }, ctx) => withUserErrors('invoice', () => new InvoiceService(ctx).removeItem(id)),
  }),
  invoiceDelete: t.field({
    type: InvoiceDeletePayload,
    description: 'Deletes a draft.',
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (_root, { id }, ctx) => withUserErrors('result', () => new InvoiceService(ctx).delete(id)),
  }),
  invoiceBook: t.field({
    type: InvoiceBookPayload,
    description: 'Books a draft: assigns the next gapless number and freezes the customer onto it.',
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (_root, { id }, ctx) => withUserErrors('invoice', () => new InvoiceService(ctx).book(id)),
  }),
  invoiceSettle: t.field({
    type: InvoiceSettlePayload,
    description: 'Records a payment (or other settlement) of a booked invoice.',
    args: {
      id: t.arg({ type: 'UUID', required: true }),
      input: t.arg({ type: InvoiceSettleInputRef, required: true }),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('result', () => new InvoiceService(ctx).settle(id, input)),
  }),
  creditNoteCreate: t.field({
    type: CreditNoteCreatePayload,
    description: 'Creates a draft credit note for some or all lines of a booked invoice.',
    args: {
      invoiceId: t.arg({ type: 'UUID', required: true }),
      input: t.arg({ type: CreditNoteCreateInputRef }),
    },
    resolve: (_root, { invoiceId, input }, ctx) =>
      withUserErrors('creditNote', () => new InvoiceService(ctx).createCreditNote(invoiceId, input ?? {})),
  }),
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
