import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../../db/tenant-keys.ts';

/** What made an entry; a correction is a new entry of its own kind, never a change to an old one. */
export const JOURNAL_KINDS = [
  'booking',
  'credit_note',
  'settlement',
  'void',
  'recognition',
  'refund',
] as const;
export type JournalKind = (typeof JOURNAL_KINDS)[number];

/**
 * One balanced posting, numbered gaplessly per environment. Immutable: triggers refuse updates and
 * deletes, and a deferred trigger refuses a commit whose lines do not sum to zero.
 */
export const JournalEntrySchema = defineEntity({
  name: 'JournalEntry',
  tableName: 'journal_entry',
  properties: {
    ...tenantKeys(),
    number: p.bigint('number'),
    kind: p.enum(JOURNAL_KINDS),
    date: p.date(),
    /** Null only for a refund out of the credit balance, which belongs to no invoice. */
    invoiceId: p.uuid().nullable(),
    customerId: p.uuid(),
    currency: p.string().length(3),
    /** For a settlement's entry: the settlement it posts (each is posted at most once). */
    settlementId: p.uuid().nullable(),
    /** For a refund's entry: the refund it posts (once). */
    refundId: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type JournalEntry = InferEntity<typeof JournalEntrySchema>;

/** One account's side of an entry: debit positive, credit negative, in the entry's minor units. */
export const JournalLineSchema = defineEntity({
  name: 'JournalLine',
  tableName: 'journal_line',
  properties: {
    ...tenantKeys(),
    entryId: p.uuid(),
    accountId: p.uuid(),
    amount: p.bigint('number'),
    /** For revenue and tax lines: the account set that chose the account. */
    accountSetId: p.uuid().nullable(),
    /** For revenue lines: the invoice line posted. */
    invoiceItemId: p.uuid().nullable(),
    taxCode: p.string().length(64).nullable(),
  },
});

export type JournalLine = InferEntity<typeof JournalLineSchema>;

/** The environment's receivable, cash and customer-credit accounts and its default account set. */
export const LedgerSettingsSchema = defineEntity({
  name: 'LedgerSettings',
  tableName: 'ledger_settings',
  properties: {
    environmentId: p.uuid().primary(),
    defaultAccountSetId: p.uuid(),
    receivableAccountId: p.uuid(),
    cashAccountId: p.uuid(),
    customerCreditAccountId: p.uuid(),
    updatedAt: p.datetime().nullable(),
  },
});

export type LedgerSettings = InferEntity<typeof LedgerSettingsSchema>;

/** A product's account set; a product without one posts to the environment's default set. */
export const ProductAccountSetSchema = defineEntity({
  name: 'ProductAccountSet',
  tableName: 'product_account_set',
  properties: {
    productId: p.uuid().primary(),
    environmentId: p.uuid(),
    accountSetId: p.uuid(),
  },
});

export type ProductAccountSet = InferEntity<typeof ProductAccountSetSchema>;

/** One share of a deferred line's schedule (see the migration for what its states mean). */
export const RecognitionRowSchema = defineEntity({
  name: 'RecognitionRow',
  tableName: 'recognition_row',
  properties: {
    ...tenantKeys(),
    invoiceId: p.uuid(),
    invoiceItemId: p.uuid(),
    accountSetId: p.uuid(),
    deferralAccountId: p.uuid(),
    incomeAccountId: p.uuid(),
    date: p.date(),
    amount: p.bigint('number'),
    postedEntryId: p.uuid().nullable(),
    cancelled: p.boolean(),
  },
});

export type RecognitionRow = InferEntity<typeof RecognitionRowSchema>;
