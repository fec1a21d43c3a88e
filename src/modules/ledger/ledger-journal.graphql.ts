import type { RequestContext } from '../../context.ts';
import { CalendarDate } from '../../dates/calendar.ts';
import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import { ProductSchema } from '../product/product.entity.ts';
import { ProductRef } from '../product/product.graphql.ts';
import { JOURNAL_KINDS, type JournalEntry, type JournalLine, type LedgerSettings } from './journal.entity.ts';
import { AccountSetRef, LedgerAccountRef } from './ledger.graphql.ts';
import { JournalEntryFilter, LedgerSettingsInput } from './ledger.input.ts';
import { ledgerLoaders } from './ledger.reads.ts';
import { type DeferredRevenue, JournalReads, type TrialBalanceRow } from './ledger-journal.reads.ts';
import { LedgerSettingsService } from './ledger-settings.service.ts';

const JournalKindEnum = builder.enumType('JournalEntryKind', {
  description: 'What made a journal entry.',
  values: describedValues(JOURNAL_KINDS, {
    booking: 'An invoice was booked.',
    credit_note: 'A credit note was booked.',
    settlement: 'A settlement was recorded (or reversed).',
    void: 'An invoice was voided.',
    recognition: 'Deferred revenue was recognised for a period.',
    refund: 'A refund was paid out.',
  }),
});

const account = async (id: string, ctx: RequestContext) => {
  const found = await ctx.loaders.of(ledgerLoaders).accountById.load(id);
  // Composite foreign keys keep every posted account in the entry's environment.
  if (!found) throw new Error(`ledger account ${id} is missing`);
  return found;
};

const LedgerSettingsRef = builder.objectRef<LedgerSettings>('LedgerSettings').implement({
  description: 'Which accounts the environment posts to; made with a default chart when first needed.',
  fields: (t) => ({
    defaultAccountSet: t.field({
      type: AccountSetRef,
      description: 'The account set of lines whose product names none.',
      resolve: (settings, _args, ctx) =>
        ctx.loaders.of(ledgerLoaders).accountSetById.load(settings.defaultAccountSetId) as never,
    }),
    receivableAccount: t.field({
      description: 'Where amounts customers owe are posted (accounts receivable).',
      type: LedgerAccountRef,
      resolve: (settings, _args, ctx) => account(settings.receivableAccountId, ctx),
    }),
    cashAccount: t.field({
      description: 'Where money received is posted.',
      type: LedgerAccountRef,
      resolve: (settings, _args, ctx) => account(settings.cashAccountId, ctx),
    }),
    customerCreditAccount: t.field({
      type: LedgerAccountRef,
      description: 'Where what moves through customers’ credit balances is posted.',
      resolve: (settings, _args, ctx) => account(settings.customerCreditAccountId, ctx),
    }),
  }),
});

const JournalLineRef = builder.objectRef<JournalLine>('JournalLine').implement({
  description: 'One line of a journal entry: an amount debited or credited to one account.',
  fields: (t) => ({
    account: t.field({
      type: LedgerAccountRef,
      resolve: (line, _args, ctx) => account(line.accountId, ctx),
      description: 'The account posted to.',
    }),
    debit: t.field({
      type: 'SafeInt',
      resolve: (line) => Math.max(line.amount, 0),
      description: 'The amount debited, in minor units; 0 for a credit line.',
    }),
    credit: t.field({
      type: 'SafeInt',
      resolve: (line) => Math.max(-line.amount, 0),
      description: 'The amount credited, in minor units; 0 for a debit line.',
    }),
    accountSetId: t.expose('accountSetId', {
      type: 'UUID',
      nullable: true,
      description: 'The account set the line came from; null when none applies.',
    }),
    invoiceItemId: t.expose('invoiceItemId', {
      type: 'UUID',
      nullable: true,
      description: 'The invoice line it posts; null when it posts no single line.',
    }),
    taxCode: t.exposeString('taxCode', {
      nullable: true,
      description: 'The tax code of the amount posted; null when untaxed or not a tax line.',
    }),
  }),
});

const JournalEntryRef = builder.objectRef<JournalEntry>('JournalEntry').implement({
  description: 'An immutable, balanced posting; corrections are new entries.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    number: t.expose('number', { type: 'SafeInt', description: 'Gapless per environment.' }),
    kind: t.expose('kind', { type: JournalKindEnum, description: 'What made the entry.' }),
    date: t.expose('date', { type: 'Date', description: 'The entry’s accounting date (ISO 8601 date).' }),
    invoiceId: t.expose('invoiceId', {
      type: 'UUID',
      nullable: true,
      description: 'Null only for a refund out of the credit balance (see refundId).',
    }),
    customerId: t.expose('customerId', { type: 'UUID', description: 'The customer’s id.' }),
    currency: t.exposeString('currency', { description: 'ISO 4217 currency code, e.g. EUR.' }),
    settlementId: t.expose('settlementId', {
      type: 'UUID',
      nullable: true,
      description: 'The settlement it records; null unless kind is settlement.',
    }),
    refundId: t.expose('refundId', {
      type: 'UUID',
      nullable: true,
      description: 'The refund it records; null unless kind is refund.',
    }),
    lines: t.field({
      description: 'Its lines: debits and credits that sum to zero.',
      type: [JournalLineRef],
      resolve: (entry, _args, ctx) => new JournalReads(ctx).lines(entry),
    }),
  }),
});

const TrialBalanceRowRef = builder.objectRef<TrialBalanceRow>('TrialBalanceRow').implement({
  description: 'One account’s totals in one currency, as of a day.',
  fields: (t) => ({
    account: t.field({
      type: LedgerAccountRef,
      resolve: (row, _args, ctx) => account(row.accountId, ctx),
      description: 'The account.',
    }),
    currency: t.exposeString('currency', { description: 'ISO 4217 currency code, e.g. EUR.' }),
    debit: t.expose('debit', { type: 'SafeInt', description: 'Sum of its debits, in minor units.' }),
    credit: t.expose('credit', { type: 'SafeInt', description: 'Sum of its credits, in minor units.' }),
    balance: t.expose('balance', { type: 'SafeInt', description: 'Debit minus credit.' }),
  }),
});

const WaterfallMonthRef = builder
  .objectRef<{ month: string; amount: number }>('DeferredRevenueMonth')
  .implement({
    description: 'Revenue still to recognise in one month.',
    fields: (t) => ({
      month: t.exposeString('month', { description: 'YYYY-MM' }),
      amount: t.expose('amount', {
        type: 'SafeInt',
        description: 'In minor units of the currency (cents for EUR).',
      }),
    }),
  });

const DeferredRevenueRef = builder.objectRef<DeferredRevenue>('DeferredRevenue').implement({
  description: 'Revenue booked but not yet recognised, for one account set and currency.',
  fields: (t) => ({
    accountSet: t.field({
      description: 'The account set the revenue posts to.',
      type: AccountSetRef,
      resolve: (row, _args, ctx) =>
        ctx.loaders.of(ledgerLoaders).accountSetById.load(row.accountSetId) as never,
    }),
    currency: t.exposeString('currency', { description: 'ISO 4217 currency code, e.g. EUR.' }),
    balance: t.expose('balance', {
      type: 'SafeInt',
      description: 'Deferred as of the date (credit balance).',
    }),
    waterfall: t.field({
      type: [WaterfallMonthRef],
      description: 'What will be recognized per month from the date on.',
      resolve: (row) => row.waterfall,
    }),
  }),
});

const JournalEntryFilterRef = builder
  .inputType('JournalEntryFilter', {
    description: 'Narrows the journal entries listed; every field given must match.',
    fields: (t) => ({
      dateFrom: t.field({ type: 'Date', description: 'Entries dated on or after.' }),
      dateTo: t.field({ type: 'Date', description: 'Entries dated on or before.' }),
      accountId: t.field({ type: 'UUID', description: 'Entries with a line on this account.' }),
      invoiceId: t.field({ type: 'UUID', description: 'Only entries of this invoice.' }),
      customerId: t.field({ type: 'UUID', description: 'Only entries of this customer’s invoices.' }),
    }),
  })
  .validate(JournalEntryFilter);

const LedgerSettingsInputRef = builder
  .inputType('LedgerSettingsInput', {
    description: 'Fields left out stay as they are; accounts must be unbarred accounts of the environment.',
    fields: (t) => ({
      defaultAccountSetId: t.field({
        type: 'UUID',
        description: 'The account set of lines whose product names none.',
      }),
      receivableAccountId: t.field({ type: 'UUID', description: 'The receivable account.' }),
      cashAccountId: t.field({ type: 'UUID', description: 'The cash account.' }),
      customerCreditAccountId: t.field({ type: 'UUID', description: 'The customer credit account.' }),
    }),
  })
  .validate(LedgerSettingsInput);

const LedgerSettingsUpdatePayload = payloadType(
  'LedgerSettingsUpdatePayload',
  'ledgerSettings',
  LedgerSettingsRef,
);
const ProductAccountSetPayload = payloadType('ProductAccountSetPayload', 'product', ProductRef);

builder.objectField(ProductRef, 'accountSet', (t) =>
  t.field({
    type: AccountSetRef,
    nullable: true,
    description: 'Where its lines post; null means the environment’s default account set.',
    resolve: async (product, _args, ctx) => {
      const id = await new LedgerSettingsService(ctx).productAccountSetId(product.id);
      return id ? ((await ctx.loaders.of(ledgerLoaders).accountSetById.load(id)) as never) : null;
    },
  }),
);

builder.queryFields((t) => ({
  ledgerSettings: t.field({
    description: 'This environment’s ledger settings (made with a default chart when first asked).',
    type: LedgerSettingsRef,
    resolve: (_root, _args, ctx) => new LedgerSettingsService(ctx).get(),
  }),
  journalEntries: t.connection(
    {
      description: 'The journal entries of this environment.',
      type: JournalEntryRef,
      args: {
        filter: t.arg({
          type: JournalEntryFilterRef,
          description: 'Only items matching every field given; all when left out.',
        }),
      },
      resolve: (_root, { filter, ...page }, ctx) => new JournalReads(ctx).entries(filter ?? {}, page),
    },
    { name: 'JournalEntryConnection' },
    { name: 'JournalEntryEdge' },
  ),
  deferredRevenue: t.field({
    type: [DeferredRevenueRef],
    description:
      'Per account set and currency: deferred revenue as of asOf and the monthly waterfall of its recognition.',
    args: {
      asOf: t.arg({
        type: 'Date',
        required: true,
        description: 'The day the deferred revenue is computed at (ISO 8601 date).',
      }),
    },
    resolve: (_root, { asOf }, ctx) => new JournalReads(ctx).deferredRevenue(CalendarDate.parse(asOf)),
  }),
  trialBalance: t.field({
    type: [TrialBalanceRowRef],
    description: 'Per account and currency, the entries dated on or before asOf; each currency sums to zero.',
    args: {
      asOf: t.arg({
        type: 'Date',
        required: true,
        description:
          'The day the totals are computed at: entries dated on or before it count (ISO 8601 date).',
      }),
    },
    resolve: (_root, { asOf }, ctx) => new JournalReads(ctx).trialBalance(CalendarDate.parse(asOf)),
  }),
}));

builder.mutationFields((t) => ({
  ledgerSettingsUpdate: t.field({
    description: 'Changes which accounts the environment posts to.',
    type: LedgerSettingsUpdatePayload,
    args: {
      input: t.arg({
        type: LedgerSettingsInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('ledgerSettings', () => new LedgerSettingsService(ctx).update(input)),
  }),
  productAccountSetSet: t.field({
    type: ProductAccountSetPayload,
    description:
      'Points a product (and invoice lines whose sku is its handle) at an account set; null for the default.',
    args: {
      productId: t.arg({ type: 'UUID', required: true, description: 'The product’s id.' }),
      accountSetId: t.arg({
        type: 'UUID',
        description: 'The account set its lines post to; null or left out: the environment’s default.',
      }),
    },
    resolve: (_root, { productId, accountSetId }, ctx) =>
      withUserErrors('product', async () => {
        const service = new LedgerSettingsService(ctx);
        await service.setProductAccountSet(productId, accountSetId ?? null);
        return ctx.em.findOneOrFail(ProductSchema, { id: productId, environmentId: ctx.environmentId });
      }),
  }),
}));
