import { builder } from '../../graphql/builder.ts';
import { NodeRef, nodeType } from '../../graphql/node.ts';
import { orderInput } from '../../graphql/ordering.ts';
import { LIST_BOUNDS, listCost } from '../../limits/query-cost.ts';
import { BillingAddressRef, CustomerRef } from '../customer/customer.graphql.ts';
import { customerLoaders } from '../customer/customer.reads.ts';
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
import { InvoiceReads, invoiceLoaders } from './invoice.reads.ts';
import { amountDue } from './invoice-collection.ts';

export const InvoiceTypeEnum = builder.enumType('InvoiceType', { values: INVOICE_TYPES });
export const InvoiceStatusEnum = builder.enumType('InvoiceStatus', { values: INVOICE_STATUSES });
export const SettlementStatusEnum = builder.enumType('SettlementStatus', { values: SETTLEMENT_STATUSES });

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
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
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
      description:
        'Net, in minor units: round(quantity × unitAmount − discount), less taxAmount when inclusive.',
    }),
    taxAmount: t.expose('taxAmount', {
      type: 'SafeInt',
      description:
        "The line's share of its rate group's VAT, or its own VAT rounded under line rounding (docs/tax.md).",
    }),
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
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    date: t.expose('date', { type: 'Date' }),
    amount: t.expose('amount', {
      type: 'SafeInt',
      description: 'In minor units of the currency (cents for EUR).',
    }),
    reference: t.exposeString('reference', { nullable: true }),
    note: t.exposeString('note', { nullable: true }),
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
    type: t.expose('type', { type: InvoiceTypeEnum }),
    status: t.expose('status', { type: InvoiceStatusEnum }),
    settlementStatus: t.expose('settlementStatus', { type: SettlementStatusEnum }),
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
    bookedAt: t.expose('bookedAt', { type: 'DateTime', nullable: true }),
    customer: t.field({
      type: InvoiceCustomerSnapshotRef,
      description:
        'The customer as this invoice names it (frozen when booked). The customer as it is now: `liveCustomer`.',
      resolve: (invoice, _args, ctx) => new InvoiceReads(ctx).customerOf(invoice),
    }),
    customerId: t.expose('customerId', { type: 'UUID', description: 'The id of the customer billed.' }),
    liveCustomer: t.field({
      type: CustomerRef,
      description: 'The customer billed, as it is now (renamed or moved since booking, perhaps).',
      resolve: async (invoice, _args, ctx) => {
        const customer = await ctx.loaders.of(customerLoaders).byId.load(invoice.customerId);
        if (!customer) throw new Error(`customer ${invoice.customerId} of invoice ${invoice.id} is missing`);
        return customer;
      },
    }),
    memo: t.exposeString('memo', { nullable: true }),
    date: t.expose('date', { type: 'Date' }),
    dueDate: t.expose('dueDate', { type: 'Date', nullable: true }),
    items: t.field({
      type: [InvoiceItemRef],
      complexity: listCost(LIST_BOUNDS.invoiceItems),
      resolve: (invoice, _args, ctx) => ctx.loaders.of(invoiceLoaders).itemsByInvoiceId.load(invoice.id),
    }),
    settlements: t.field({
      type: [SettlementRef],
      complexity: listCost(LIST_BOUNDS.settlements),
      resolve: (invoice, _args, ctx) =>
        ctx.loaders.of(invoiceLoaders).settlementsByInvoiceId.load(invoice.id),
    }),
    creditedInvoice: t.field({
      type: InvoiceRef,
      nullable: true,
      description: 'On a credit note: the invoice it credits.',
      resolve: (invoice, _args, ctx) =>
        invoice.creditedInvoiceId
          ? ctx.loaders.of(invoiceLoaders).byId.load(invoice.creditedInvoiceId)
          : null,
    }),
    totalExclVat: t.expose('totalExclVat', { type: 'SafeInt', description: 'Σ item amount.' }),
    totalVat: t.expose('totalVat', { type: 'SafeInt', description: 'Σ item taxAmount.' }),
    totalInclVat: t.expose('totalInclVat', { type: 'SafeInt' }),
    totalDue: t.field({
      type: 'SafeInt',
      description: 'totalInclVat − Σ settlements; negative when over-settled; 0 when void.',
      resolve: (invoice) => amountDue(invoice),
    }),
  }),
});

const InvoiceConnectionRef = builder.connectionObject(
  { type: InvoiceRef, name: 'InvoiceConnection' },
  { name: 'InvoiceEdge' },
);

const InvoiceFilterRef = builder
  .inputType('InvoiceFilter', {
    fields: (t) => ({
      customerId: t.field({ type: 'UUID' }),
      type: t.field({ type: InvoiceTypeEnum }),
      status: t.field({ type: InvoiceStatusEnum }),
      settlementStatus: t.field({ type: SettlementStatusEnum }),
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
    fields: (t) => ({
      type: t.field({ type: InvoiceTypeEnum }),
      status: t.field({ type: InvoiceStatusEnum }),
      settlementStatus: t.field({ type: SettlementStatusEnum }),
      dateFrom: t.field({ type: 'Date' }),
      dateTo: t.field({ type: 'Date' }),
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
      args: { filter: t.arg({ type: CustomerInvoiceFilterRef }), orderBy: t.arg({ type: InvoiceOrder.ref }) },
      resolve: (customer, { filter, orderBy, ...page }, ctx) =>
        new InvoiceReads(ctx).list(
          { ...filter, customerId: customer.id },
          page,
          InvoiceOrder.toSort(orderBy),
        ),
    },
    InvoiceConnectionRef,
  ),
);

builder.queryFields((t) => ({
  invoice: t.field({
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
      args: { filter: t.arg({ type: InvoiceFilterRef }), orderBy: t.arg({ type: InvoiceOrder.ref }) },
      resolve: (_root, { filter, orderBy, ...page }, ctx) =>
        new InvoiceReads(ctx).list(filter ?? {}, page, InvoiceOrder.toSort(orderBy)),
    },
    InvoiceConnectionRef,
  ),
}));

nodeType('Invoice', (ctx, id) => ctx.loaders.of(invoiceLoaders).byId.load(id));
