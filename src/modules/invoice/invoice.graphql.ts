import type { GraphQLResolveInfo } from 'graphql';
import { builder } from '../../graphql/builder.ts';
import { objectType, perSelection, propertiesRead, reads, SAME_ROW } from '../../graphql/columns.ts';
import { exposeDecimal } from '../../graphql/decimal.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { NodeRef, nodeType } from '../../graphql/node.ts';
import { orderInput } from '../../graphql/ordering.ts';
import { selectedFields } from '../../graphql/selection.ts';
import { LIST_BOUNDS, listCost } from '../../limits/query-cost.ts';
import { BillingAddressRef, CustomerRef } from '../customer/customer.graphql.ts';
import { SETTLEMENT_STATUSES } from './invoice.arithmetic.ts';
import {
  INVOICE_STATUSES,
  INVOICE_TYPES,
  type Invoice,
  type InvoiceCustomer,
  type InvoiceItem,
  type Settlement,
} from './invoice.entity.ts';
import { InvoiceFilter } from './invoice.input.ts';
import { type InvoicePageParts, InvoiceReads, invoiceLoaders } from './invoice.reads.ts';
import { amountDue } from './invoice-collection.ts';

export const InvoiceTypeEnum = builder.enumType('InvoiceType', {
  description: 'Whether a document bills the customer or credits an invoice back.',
  values: describedValues(INVOICE_TYPES, {
    invoice: 'An invoice: the customer owes its total.',
    credit_note: 'A credit note: it credits (part of) a booked invoice back to the customer.',
  }),
});
export const InvoiceStatusEnum = builder.enumType('InvoiceStatus', {
  description: 'Whether the document can still change.',
  values: describedValues(INVOICE_STATUSES, {
    draft: 'Editable and without a number; it can be deleted.',
    booked: 'Final: numbered, in the ledger, and no longer editable.',
  }),
});
export const SettlementStatusEnum = builder.enumType('SettlementStatus', {
  description: 'How the settlements recorded on an invoice compare with its total.',
  values: describedValues(SETTLEMENT_STATUSES, {
    settled: 'Settlements equal the total.',
    over_settled: 'Settlements exceed the total.',
    under_settled: 'Some, but less than the total, is settled.',
    not_settled: 'Nothing is settled yet.',
  }),
});

/**
 * A value, not an entity: it has no `id`, so normalized caches (Apollo, urql, Relay) keep each
 * invoice's copy apart from the live Customer instead of merging them under the customer's id.
 */
const InvoiceCustomerSnapshotRef = builder.objectRef<InvoiceCustomer>('InvoiceCustomerSnapshot').implement({
  description:
    'The customer as the invoice names it: frozen when booked, the live customer while a draft. Has no ' +
    'id on purpose (client caches would merge it with the live customer): the invoice has `customerId` ' +
    'and `liveCustomer`.',
  fields: (t) => ({
    handle: t.exposeString('handle', { nullable: true, description: "The customer's handle then." }),
    name: t.exposeString('name', { description: "The customer's name then." }),
    billingAddress: t.expose('billingAddress', {
      type: BillingAddressRef,
      description: "The customer's billing address then.",
    }),
  }),
});

const InvoiceItemTaxRef = builder.objectRef<InvoiceItem>('InvoiceItemTax').implement({
  description: 'The tax treatment of an invoice line.',
  fields: (t) => ({
    taxable: t.boolean({
      extensions: reads('taxCode'),
      resolve: (item) => item.taxCode != null,
      description: 'Whether the line is taxed: it has a tax code.',
    }),
    taxCode: t.exposeString('taxCode', {
      nullable: true,
      description: 'The tax code the line is taxed by; null for an untaxed line.',
    }),
    taxRate: exposeDecimal(t, 'taxRate', {
      nullable: true,
      description: 'Percentage (25 is 25 %), as the tax code had it when the line got it.',
    }),
  }),
});

const InvoiceItemDiscountRef = builder.objectRef<InvoiceItem>('InvoiceItemDiscount').implement({
  description: 'A discount on an invoice line: a percentage or an amount.',
  fields: (t) => ({
    percentage: t.float({
      description: '10 is 10 %.',
      extensions: reads('discountPercentage'),
      resolve: (item) => Number(item.discountPercentage),
    }),
    amount: t.float({
      description: 'Minor units.',
      extensions: reads('discountAmount'),
      resolve: (item) => Number(item.discountAmount),
    }),
  }),
});

export const InvoiceItemRef = builder.objectRef<InvoiceItem>('InvoiceItem').implement({
  description: 'One line of an invoice or credit note.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    quantity: exposeDecimal(t, 'quantity', { description: 'The quantity billed (up to 6 decimals).' }),
    unitAmount: exposeDecimal(t, 'unitAmount', {
      description: 'Minor units; may be fractional (0.25 cents per call).',
    }),
    sku: t.exposeString('sku', {
      nullable: true,
      description: 'The article number, as printed; null when none.',
    }),
    title: t.exposeString('title', { description: 'The line’s title, as printed.' }),
    description: t.exposeString('description', {
      nullable: true,
      description: 'More text under the title; null when none.',
    }),
    periodStart: t.expose('periodStart', {
      type: 'Date',
      nullable: true,
      description: 'First day the line covers (ISO 8601 date); null for a line without a period.',
    }),
    periodEnd: t.expose('periodEnd', {
      type: 'Date',
      nullable: true,
      description: 'Last day the line covers (ISO 8601 date); null for a line without a period.',
    }),
    amount: t.expose('amount', {
      type: 'SafeInt',
      description:
        'Net, in minor units: round(quantity × unitAmount − discount), less taxAmount when inclusive.',
    }),
    taxAmount: t.expose('taxAmount', {
      type: 'SafeInt',
      description:
        "The line's share of its rate group's VAT, or its own VAT rounded under line rounding (docs/tax.md).",
    }),
    tax: t.field({
      type: InvoiceItemTaxRef,
      extensions: SAME_ROW,
      resolve: (item) => item,
      description: 'How the line is taxed.',
    }),
    discount: t.field({
      type: InvoiceItemDiscountRef,
      extensions: SAME_ROW,
      resolve: (item) => item,
      description: 'The line’s discount.',
    }),
    creditedItemId: t.expose('creditedItemId', {
      type: 'UUID',
      nullable: true,
      description: 'On a credit note: the invoice line this line credits.',
    }),
  }),
});

export const SettlementRef = builder.objectRef<Settlement>('Settlement').implement({
  description: 'A payment (or other settlement) recorded against an invoice.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    date: t.expose('date', { type: 'Date', description: 'The day it was settled (ISO 8601 date).' }),
    amount: t.expose('amount', {
      type: 'SafeInt',
      description: 'In minor units of the currency (cents for EUR).',
    }),
    reference: t.exposeString('reference', {
      nullable: true,
      description: 'The payment’s reference (e.g. a bank transaction id); null when none.',
    }),
    note: t.exposeString('note', { nullable: true, description: 'A note for people; null when none.' }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
  }),
});

export const InvoiceRef = builder.objectRef<Invoice>('Invoice');

InvoiceRef.implement({
  interfaces: [NodeRef],
  description: 'An invoice or a credit note. Amounts are integers in the minor unit of its currency.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'A UUID; the same id in REST.' }),
    handle: t.exposeString('handle', { nullable: true, description: 'The gapless number, once booked.' }),
    type: t.expose('type', { type: InvoiceTypeEnum, description: 'Invoice or credit note.' }),
    status: t.expose('status', {
      type: InvoiceStatusEnum,
      description: 'Draft (editable) or booked (final).',
    }),
    settlementStatus: t.expose('settlementStatus', {
      type: SettlementStatusEnum,
      description: 'How the settlements compare with the total.',
    }),
    currency: t.exposeString('currency', { description: 'ISO 4217 currency code, e.g. EUR.' }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it last changed (ISO 8601, UTC); null if it never changed.',
    }),
    bookedAt: t.expose('bookedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it was booked (ISO 8601, UTC); null while a draft.',
    }),
    customer: t.field({
      type: InvoiceCustomerSnapshotRef,
      description:
        'The customer as this invoice names it (frozen when booked). The customer as it is now: `liveCustomer`.',
      extensions: reads('customerSnapshot', 'customerId'),
      resolve: (invoice, _args, ctx) => new InvoiceReads(ctx).customerOf(invoice),
    }),
    customerId: t.expose('customerId', { type: 'UUID', description: 'The id of the customer billed.' }),
    liveCustomer: t.field({
      type: CustomerRef,
      description: 'The customer billed, as it is now (renamed or moved since booking, perhaps).',
      extensions: reads('customerId'),
      resolve: async (invoice, _args, ctx) => {
        const customer = await new InvoiceReads(ctx).liveCustomerOf(invoice);
        if (!customer) throw new Error(`customer ${invoice.customerId} of invoice ${invoice.id} is missing`);
        return customer;
      },
    }),
    memo: t.exposeString('memo', {
      nullable: true,
      description: 'A note printed on the document; null when none.',
    }),
    date: t.expose('date', { type: 'Date', description: 'The document date (ISO 8601 date).' }),
    dueDate: t.expose('dueDate', {
      type: 'Date',
      nullable: true,
      description: 'The day payment is due (ISO 8601 date); null without a payment term.',
    }),
    items: t.field({
      description: 'Its lines, in order.',
      type: [InvoiceItemRef],
      complexity: listCost(LIST_BOUNDS.invoiceItems),
      extensions: reads(),
      resolve: (invoice, _args, ctx) => new InvoiceReads(ctx).itemsOf(invoice),
    }),
    settlements: t.field({
      description: 'The settlements recorded on it, oldest first.',
      type: [SettlementRef],
      complexity: listCost(LIST_BOUNDS.settlements),
      extensions: reads(),
      resolve: (invoice, _args, ctx) => new InvoiceReads(ctx).settlementsOf(invoice),
    }),
    creditedInvoice: t.field({
      type: InvoiceRef,
      nullable: true,
      description: 'On a credit note: the invoice it credits.',
      extensions: reads('creditedInvoiceId'),
      resolve: (invoice, _args, ctx) =>
        invoice.creditedInvoiceId
          ? ctx.loaders.of(invoiceLoaders).byId.load(invoice.creditedInvoiceId)
          : null,
    }),
    totalExclVat: t.expose('totalExclVat', { type: 'SafeInt', description: 'Σ item amount.' }),
    totalVat: t.expose('totalVat', { type: 'SafeInt', description: 'Σ item taxAmount.' }),
    totalInclVat: t.expose('totalInclVat', {
      type: 'SafeInt',
      description: 'The total including VAT, in minor units of the currency.',
    }),
    totalDue: t.field({
      type: 'SafeInt',
      description: 'totalInclVat − Σ settlements; negative when over-settled; 0 when void.',
      extensions: reads('voidedAt', 'totalInclVat', 'settledAmount'),
      resolve: (invoice) => amountDue(invoice),
    }),
  }),
});

/**
 * What the invoices of a page are asked for: the columns their fields read, and what besides their own
 * columns, with the columns those fields read: read with the page (InvoiceReads.list). Worked out once
 * per parsed document (perSelection).
 */
const pageParts = perSelection((info: GraphQLResolveInfo): InvoicePageParts => {
  const node = ['edges', 'node'];
  const fields = selectedFields(info, node);
  const columns = (field: string, type: string) =>
    fields.has(field) ? propertiesRead(info, [...node, field], objectType(info, type)) : undefined;
  return {
    columns: propertiesRead(info, node, objectType(info, 'Invoice')),
    items: columns('items', 'InvoiceItem'),
    settlements: columns('settlements', 'Settlement'),
    customer: columns('liveCustomer', 'Customer'),
    draftCustomer: fields.has('customer'),
  };
});

const InvoiceConnectionRef = builder.connectionObject(
  { type: InvoiceRef, name: 'InvoiceConnection' },
  { name: 'InvoiceEdge' },
);

const InvoiceFilterRef = builder
  .inputType('InvoiceFilter', {
    description: 'Narrows the invoices listed; every field given must match.',
    fields: (t) => ({
      customerId: t.field({ type: 'UUID', description: 'Only this customer’s invoices.' }),
      type: t.field({ type: InvoiceTypeEnum, description: 'Only invoices or only credit notes.' }),
      status: t.field({ type: InvoiceStatusEnum, description: 'Only drafts or only booked ones.' }),
      settlementStatus: t.field({ type: SettlementStatusEnum, description: 'Only this settlement status.' }),
      dateFrom: t.field({ type: 'Date', description: 'Invoices dated on or after this day.' }),
      dateTo: t.field({ type: 'Date', description: 'Invoices dated on or before this day.' }),
      overdue: t.boolean({
        description: 'true: only invoices with daysOverdue > 0 (as of today, UTC); false: only the others.',
      }),
    }),
  })
  .validate(InvoiceFilter);

const CustomerInvoiceFilterRef = builder
  .inputType('CustomerInvoiceFilter', {
    description: 'Narrows the customer’s invoices listed; every field given must match.',
    fields: (t) => ({
      type: t.field({ type: InvoiceTypeEnum, description: 'Only invoices or only credit notes.' }),
      status: t.field({ type: InvoiceStatusEnum, description: 'Only drafts or only booked ones.' }),
      settlementStatus: t.field({ type: SettlementStatusEnum, description: 'Only this settlement status.' }),
      dateFrom: t.field({ type: 'Date', description: 'Invoices dated on or after this day.' }),
      dateTo: t.field({ type: 'Date', description: 'Invoices dated on or before this day.' }),
      overdue: t.boolean({
        description: 'true: only invoices with daysOverdue > 0 (as of today, UTC); false: only the others.',
      }),
    }),
  })
  .validate(InvoiceFilter);

const InvoiceOrder = orderInput<Invoice>('Invoice', 'invoices', {
  created_at: { field: 'id', description: 'Creation time (the default).' },
  date: { field: 'date', description: 'Invoice date.' },
  total: {
    field: 'totalInclVat',
    description: 'Total including VAT, in minor units (whatever the currency).',
  },
});

builder.objectField(CustomerRef, 'invoices', (t) =>
  t.connection(
    {
      type: InvoiceRef,
      description:
        "The customer's invoices and credit notes, in creation order unless `orderBy` says otherwise.",
      args: {
        filter: t.arg({
          type: CustomerInvoiceFilterRef,
          description: 'Only items matching every field given; all when left out.',
        }),
        orderBy: t.arg({
          type: InvoiceOrder.ref,
          description: 'The sort order; creation order when left out.',
        }),
      },
      resolve: (customer, { filter, orderBy, ...page }, ctx, info) =>
        new InvoiceReads(ctx).list(
          { ...filter, customerId: customer.id },
          page,
          InvoiceOrder.toSort(orderBy),
          pageParts(info),
        ),
    },
    InvoiceConnectionRef,
  ),
);

builder.queryFields((t) => ({
  invoice: t.field({
    description: 'The invoice or credit note with this id; null when this environment has none.',
    type: InvoiceRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => ctx.loaders.of(invoiceLoaders).byId.load(id),
  }),
  invoiceByNumber: t.field({
    type: InvoiceRef,
    nullable: true,
    description: "The environment's booked invoice or credit note with this number; null when there is none.",
    args: { number: t.arg.string({ required: true, description: 'The number (`handle`), as printed.' }) },
    resolve: (_root, { number }, ctx) => new InvoiceReads(ctx).byNumber(number),
  }),
  invoices: t.connection(
    {
      type: InvoiceRef,
      description:
        "The environment's invoices and credit notes, in creation order unless `orderBy` says otherwise.",
      args: {
        filter: t.arg({
          type: InvoiceFilterRef,
          description: 'Only items matching every field given; all when left out.',
        }),
        orderBy: t.arg({
          type: InvoiceOrder.ref,
          description: 'The sort order; creation order when left out.',
        }),
      },
      resolve: (_root, { filter, orderBy, ...page }, ctx, info) =>
        new InvoiceReads(ctx).list(filter ?? {}, page, InvoiceOrder.toSort(orderBy), pageParts(info)),
    },
    InvoiceConnectionRef,
  ),
}));

nodeType('Invoice', (ctx, id) => ctx.loaders.of(invoiceLoaders).byId.load(id));
