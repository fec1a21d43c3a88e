import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { TAX_ROUNDINGS } from '../../auth/environment.entity.ts';
import { tenantKeys } from '../../db/tenant-keys.ts';
import type { BillingAddress } from '../customer/customer.entity.ts';
import type { InvoiceSeller } from '../seller/seller.entity.ts';
import type { TaxId } from '../tax/tax-id.ts';
import { TAX_BEHAVIORS, TAX_EXEMPTIONS } from '../tax/tax-policy.ts';
import { SETTLEMENT_STATUSES } from './invoice.arithmetic.ts';

export const INVOICE_TYPES = ['invoice', 'credit_note'] as const;
export type InvoiceType = (typeof INVOICE_TYPES)[number];

export const INVOICE_STATUSES = ['draft', 'booked'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

export const CREDIT_REASONS = [
  'duplicate',
  'fraudulent',
  'order_change',
  'product_unsatisfactory',
  'other',
] as const;
export type CreditReason = (typeof CREDIT_REASONS)[number];

/** What booking a credit note does with its total (docs/credit-balance.md). */
export const CREDIT_OUTCOMES = ['settle_invoice', 'credit_balance', 'refund'] as const;
export type CreditOutcome = (typeof CREDIT_OUTCOMES)[number];

/** The customer as the invoice names it (contract 2.2); frozen onto the invoice when it is booked. */
export type InvoiceCustomer = {
  id: string;
  handle: string | null;
  name: string;
  billingAddress: BillingAddress;
  /** Booked since the seller profile: the company and VAT ids the documents print (art. 226). */
  companyName?: string | null;
  taxIds?: TaxId[];
  /** The buyer's electronic address in e-invoices (BT-49). */
  email?: string | null;
};

export const InvoiceSchema = defineEntity({
  name: 'Invoice',
  tableName: 'invoice',
  uniques: [{ name: 'invoice_environment_handle_unique', properties: ['environmentId', 'handle'] }],
  properties: {
    ...tenantKeys(),
    type: p.enum(INVOICE_TYPES),
    status: p.enum(INVOICE_STATUSES),
    /** The gapless number, assigned when the invoice is booked. */
    handle: p.string().length(40).nullable(),
    customerId: p.uuid(),
    /** Set when booked: a booked invoice keeps naming the customer as it was then. */
    customerSnapshot: p.json<InvoiceCustomer>().nullable(),
    /** Set when booked: the seller profile as it was then (drafts show the live one). */
    sellerSnapshot: p.json<InvoiceSeller>().nullable(),
    /** For a credit note: the booked invoice it credits. */
    creditedInvoiceId: p.uuid().nullable(),
    /** For a credit note: why it was issued, and what booking it does with its total. */
    creditReason: p.enum(CREDIT_REASONS).nullable(),
    creditOutcome: p.enum(CREDIT_OUTCOMES).nullable(),
    currency: p.string().length(3),
    date: p.date(),
    dueDate: p.date().nullable(),
    memo: p.string().length(400).nullable(),
    /** Sums of the items' amounts, kept by the service whenever the items change. */
    totalExclVat: p.bigint('number'),
    totalVat: p.bigint('number'),
    totalInclVat: p.bigint('number'),
    /** Sum of the settlements, kept with `settlementStatus` so lists can filter on it. */
    settledAmount: p.bigint('number'),
    settlementStatus: p.enum(SETTLEMENT_STATUSES),
    /** The VAT rounding and customer exemption the amounts were computed with; booked, they stay. */
    taxRounding: p.enum(TAX_ROUNDINGS).default('document'),
    taxExempt: p.enum(TAX_EXEMPTIONS).default('none'),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().nullable(),
    bookedAt: p.datetime().nullable(),
    /** Set when a booked invoice is voided: it keeps its number and nothing is due on it. */
    voidedAt: p.datetime().nullable(),
    /** Set when a booked invoice is written off as uncollectible; it may still be paid later. */
    uncollectibleAt: p.datetime().nullable(),
    /** When its `invoice.overdue` event was written; null until then. */
    overdueEventAt: p.datetime().nullable(),
  },
});

export type Invoice = InferEntity<typeof InvoiceSchema>;

export const InvoiceItemSchema = defineEntity({
  name: 'InvoiceItem',
  tableName: 'invoice_item',
  properties: {
    ...tenantKeys(),
    /**
     * The invoice's id, declared as the reference it is so that the unit of work inserts an invoice
     * before its lines: a new invoice and its items are written in one flush.
     */
    invoiceId: () =>
      p
        .manyToOne(InvoiceSchema)
        .mapToPk()
        .fieldName('invoice_id')
        .foreignKeyName('invoice_item_invoice_id_fkey')
        .deleteRule('cascade'),
    /** For a credit note line: the invoice line it credits (in full or in part). */
    creditedItemId: p.uuid().nullable(),
    /** For a billing run's line: the billed period it charges; removing the line releases the period. */
    billedPeriodId: p.uuid().nullable(),
    /** For a proration line's invoice line: that proration line; removing the line releases it. */
    prorationLineId: p.uuid().nullable(),
    quantity: p.decimal('string').precision(21).scale(6),
    /** Minor units, possibly fractional. */
    unitAmount: p.decimal('string').precision(21).scale(6),
    sku: p.string().length(250).nullable(),
    title: p.string().length(500),
    description: p.string().length(4000).nullable(),
    periodStart: p.date().nullable(),
    periodEnd: p.date().nullable(),
    /** Null when the line is not taxable; the rate is the code's rate when the line got it. */
    taxCode: p.string().length(64).nullable(),
    taxRate: p.decimal('string').precision(7).scale(4).nullable(),
    /** Inclusive: quantity × unitAmount − discount is the gross, and `amount` the net derived from it. */
    taxBehavior: p.enum(TAX_BEHAVIORS).default('exclusive'),
    discountPercentage: p.decimal('string').precision(7).scale(4),
    discountAmount: p.decimal('string').precision(21).scale(6),
    amount: p.bigint('number'),
    taxAmount: p.bigint('number'),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type InvoiceItem = InferEntity<typeof InvoiceItemSchema>;

export const SettlementSchema = defineEntity({
  name: 'Settlement',
  tableName: 'settlement',
  properties: {
    ...tenantKeys(),
    invoiceId: p.uuid(),
    date: p.date(),
    amount: p.bigint('number'),
    reference: p.string().length(250).nullable(),
    note: p.string().length(1000).nullable(),
    /** On a reversal: the settlement it cancels (its amount is the negation of that one's). */
    reversesSettlementId: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type Settlement = InferEntity<typeof SettlementSchema>;

/**
 * Per environment and invoice type: how its numbers look and the last number issued. The row with
 * period key '' holds the configuration and the continuous count; with a yearly reset, each year of
 * invoice dates counts in a row of its own (period key '2026').
 */
export const InvoiceNumberingSchema = defineEntity({
  name: 'InvoiceNumbering',
  tableName: 'invoice_numbering',
  properties: {
    environmentId: p.uuid().primary(),
    type: p.enum(INVOICE_TYPES).primary(),
    periodKey: p.string().length(4).primary().default(''),
    prefix: p.string().length(20),
    /** Null: the prefix followed by six digits, the format from before patterns. */
    pattern: p.string().length(60).nullable(),
    yearlyReset: p.boolean().default(false),
    lastNumber: p.bigint('number'),
  },
});

export type InvoiceNumbering = InferEntity<typeof InvoiceNumberingSchema>;
