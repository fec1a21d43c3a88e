import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { type UserError, UserErrorRef, withUserErrors } from '../../graphql/user-errors.ts';
import { LIST_BOUNDS, listCost } from '../../limits/query-cost.ts';
import { CustomerRef } from '../customer/customer.graphql.ts';
import { InvoiceRef } from '../invoice/invoice.graphql.ts';
import { invoiceLoaders } from '../invoice/invoice.reads.ts';
import {
  BALANCE_TRANSACTION_TYPES,
  type BalanceTransaction,
  type CustomerBalance,
  type Refund,
} from './balance.entity.ts';
import { RefundCreateInput } from './balance.input.ts';
import { BalanceReads, balanceLoaders } from './balance.reads.ts';
import { RefundService } from './refund.service.ts';

const BalanceTransactionTypeEnum = builder.enumType('BalanceTransactionType', {
  description: 'What moved a customer’s balance.',
  values: describedValues(BALANCE_TRANSACTION_TYPES, {
    overpayment: 'A settlement paid more than an invoice’s total; the excess is credited.',
    credit_note: 'A booked credit note credited the balance.',
    applied: 'Balance was used to pay (part of) an invoice.',
    refund: 'Balance was paid back to the customer.',
    invoice_credit:
      'A billing-run invoice came out below zero (unused time credited): its credit went to the balance.',
  }),
});

export const CustomerBalanceRef = builder.objectRef<CustomerBalance>('CustomerBalance').implement({
  description: "A customer's credit in one currency, in its minor unit; never negative.",
  fields: (t) => ({
    currency: t.exposeString('currency', { description: 'ISO 4217 currency code, e.g. EUR.' }),
    amount: t.expose('amount', {
      type: 'SafeInt',
      description: 'In minor units of the currency (cents for EUR).',
    }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it last changed (ISO 8601, UTC); null if it never changed.',
    }),
  }),
});

const RefundRef = builder.objectRef<Refund>('Refund').implement({
  description: 'Money paid back to the customer, from its balance or for a credit note.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    currency: t.exposeString('currency', { description: 'ISO 4217 currency code, e.g. EUR.' }),
    amount: t.expose('amount', {
      type: 'SafeInt',
      description: 'In minor units of the currency (cents for EUR).',
    }),
    date: t.expose('date', { type: 'Date', description: 'The day it was paid out (ISO 8601 date).' }),
    reference: t.exposeString('reference', {
      nullable: true,
      description: 'The payment’s reference (e.g. a bank transaction id); null when none.',
    }),
    note: t.exposeString('note', { nullable: true, description: 'A note for people; null when none.' }),
    creditNote: t.field({
      type: InvoiceRef,
      nullable: true,
      description: 'The credit note booked with outcome refund; null for a refund from the balance.',
      resolve: (refund, _args, ctx) =>
        refund.creditNoteId ? ctx.loaders.of(invoiceLoaders).byId.load(refund.creditNoteId) : null,
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
  }),
});

const BalanceTransactionRef = builder.objectRef<BalanceTransaction>('BalanceTransaction').implement({
  description: 'One movement of a credit balance: positive adds credit, negative uses it.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    type: t.expose('type', { type: BalanceTransactionTypeEnum, description: 'What moved the balance.' }),
    currency: t.exposeString('currency', { description: 'ISO 4217 currency code, e.g. EUR.' }),
    amount: t.expose('amount', {
      type: 'SafeInt',
      description: 'In minor units of the currency (cents for EUR).',
    }),
    invoice: t.field({
      type: InvoiceRef,
      nullable: true,
      description: 'overpayment: the over-settled invoice; applied: the invoice the balance settled.',
      resolve: (row, _args, ctx) =>
        row.invoiceId && row.type !== 'credit_note'
          ? ctx.loaders.of(invoiceLoaders).byId.load(row.invoiceId)
          : null,
    }),
    creditNote: t.field({
      type: InvoiceRef,
      nullable: true,
      description: 'credit_note: the credit note booked with outcome credit_balance.',
      resolve: (row, _args, ctx) =>
        row.invoiceId && row.type === 'credit_note'
          ? ctx.loaders.of(invoiceLoaders).byId.load(row.invoiceId)
          : null,
    }),
    refund: t.field({
      description: 'The refund that paid the balance out; null unless type is refund.',
      type: RefundRef,
      nullable: true,
      resolve: (row, _args, ctx) => (row.refundId ? new BalanceReads(ctx).refund(row.refundId) : null),
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
  }),
});

const BalanceTransactionConnectionRef = builder.connectionObject(
  { type: BalanceTransactionRef, name: 'BalanceTransactionConnection' },
  { name: 'BalanceTransactionEdge' },
);
const RefundConnectionRef = builder.connectionObject(
  { type: RefundRef, name: 'RefundConnection' },
  { name: 'RefundEdge' },
);

builder.objectFields(CustomerRef, (t) => ({
  balances: t.field({
    type: [CustomerBalanceRef],
    description: 'The credit balance per currency the customer has had one in.',
    complexity: listCost(LIST_BOUNDS.customerBalances),
    resolve: (customer, _args, ctx) => ctx.loaders.of(balanceLoaders).balancesByCustomerId.load(customer.id),
  }),
  balanceTransactions: t.connection(
    {
      description: 'The transactions that moved the customer’s balance.',
      type: BalanceTransactionRef,
      resolve: (customer, page, ctx) => new BalanceReads(ctx).transactions(customer.id, page),
    },
    BalanceTransactionConnectionRef,
  ),
  refunds: t.connection(
    {
      type: RefundRef,
      description: 'The refunds paid out to the customer.',
      resolve: (customer, page, ctx) => new BalanceReads(ctx).refunds(customer.id, page),
    },
    RefundConnectionRef,
  ),
}));

const RefundCreateInputRef = builder
  .inputType('RefundCreateInput', {
    description: 'A refund: balance paid back to the customer.',
    fields: (t) => ({
      currency: t.string({ description: "Defaults to the customer's currency." }),
      amount: t.field({ type: 'SafeInt', required: true, description: 'Minor units, more than 0.' }),
      date: t.field({ type: 'Date', description: 'Defaults to today (UTC).' }),
      reference: t.string({
        description: 'The payment’s reference (e.g. a bank transaction id); none when left out.',
      }),
      note: t.string({ description: 'A note for people; none when left out.' }),
    }),
  })
  .validate(RefundCreateInput);

type RefundResult = { refund: Refund; balance: CustomerBalance };

const RefundCreatePayload = builder
  .objectRef<{ result: RefundResult | null; userErrors: UserError[] }>('RefundCreatePayload')
  .implement({
    description:
      'What refundCreate answers: the refund and the balance after it, or the userErrors that refused it.',
    fields: (t) => ({
      refund: t.field({
        description: 'The refund recorded; null when userErrors is not empty.',
        type: RefundRef,
        nullable: true,
        resolve: (payload) => payload.result?.refund ?? null,
      }),
      balance: t.field({
        description: 'The customer’s balance after the refund; null when userErrors is not empty.',
        type: CustomerBalanceRef,
        nullable: true,
        resolve: (payload) => payload.result?.balance ?? null,
      }),
      userErrors: t.field({
        type: [UserErrorRef],
        description: 'Why the mutation changed nothing; empty when it succeeded.',
        resolve: (payload) => payload.userErrors,
      }),
    }),
  });

builder.mutationFields((t) => ({
  refundCreate: t.field({
    type: RefundCreatePayload,
    description: 'Records money paid back to a customer out of its credit balance, which it reduces.',
    args: {
      customerId: t.arg({ type: 'UUID', required: true, description: 'The customer’s id.' }),
      input: t.arg({
        type: RefundCreateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { customerId, input }, ctx) =>
      withUserErrors('result', () => new RefundService(ctx).create(customerId, input)),
  }),
}));
