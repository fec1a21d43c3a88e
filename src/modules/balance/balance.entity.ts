import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../../db/tenant-keys.ts';

/** A customer's credit in one currency: what it may still use or be paid back. Never negative. */
export const CustomerBalanceSchema = defineEntity({
  name: 'CustomerBalance',
  tableName: 'customer_balance',
  uniques: [
    {
      name: 'customer_balance_customer_currency_unique',
      properties: ['environmentId', 'customerId', 'currency'],
    },
  ],
  properties: {
    ...tenantKeys(),
    customerId: p.uuid(),
    currency: p.string().length(3),
    /** Minor units; always Σ of the customer's balance transactions in this currency. */
    amount: p.bigint('number'),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().nullable(),
  },
});

export type CustomerBalance = InferEntity<typeof CustomerBalanceSchema>;

export const BALANCE_TRANSACTION_TYPES = [
  'overpayment',
  'credit_note',
  'applied',
  'refund',
  'invoice_credit',
] as const;
export type BalanceTransactionType = (typeof BALANCE_TRANSACTION_TYPES)[number];

/** One movement of a balance, append-only: positive adds credit, negative uses it. */
export const BalanceTransactionSchema = defineEntity({
  name: 'BalanceTransaction',
  tableName: 'balance_transaction',
  properties: {
    ...tenantKeys(),
    customerId: p.uuid(),
    currency: p.string().length(3),
    type: p.enum(BALANCE_TRANSACTION_TYPES),
    amount: p.bigint('number'),
    /** The over-settled invoice, the credit note, the invoice the balance was applied to, or the credit-only invoice (invoice_credit). */
    invoiceId: p.uuid().nullable(),
    refundId: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type BalanceTransaction = InferEntity<typeof BalanceTransactionSchema>;

/** Money paid back to a customer: from its balance, or for a credit note booked with `refund`. */
export const RefundSchema = defineEntity({
  name: 'Refund',
  tableName: 'refund',
  properties: {
    ...tenantKeys(),
    customerId: p.uuid(),
    currency: p.string().length(3),
    /** Minor units, more than 0. */
    amount: p.bigint('number'),
    creditNoteId: p.uuid().nullable(),
    date: p.date(),
    reference: p.string().length(250).nullable(),
    note: p.string().length(1000).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type Refund = InferEntity<typeof RefundSchema>;
