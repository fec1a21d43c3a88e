import { z } from 'zod';
import { CalendarDate } from '../../dates/calendar.ts';
import { boundedText, Uuid } from '../../validation.ts';
import { RECOGNITION_STRATEGIES } from './account-set.entity.ts';

const ledgerAccountFields = {
  name: boundedText(1, 250),
  accountingCode: boundedText(1, 64),
  barred: z.boolean(),
};

export const LedgerAccountCreateInput = z.strictObject({
  ...ledgerAccountFields,
  barred: ledgerAccountFields.barred.default(false),
});
export type LedgerAccountCreateInput = z.infer<typeof LedgerAccountCreateInput>;

/** A partial update: an absent field stays as it is. */
export const LedgerAccountUpdateInput = z.strictObject({
  name: ledgerAccountFields.name.optional(),
  accountingCode: ledgerAccountFields.accountingCode.optional(),
  barred: ledgerAccountFields.barred.optional(),
});
export type LedgerAccountUpdateInput = z.infer<typeof LedgerAccountUpdateInput>;

const accountSetFields = {
  name: boundedText(1, 250).nullish(),
  salesAccountId: Uuid,
  incomeAccountId: Uuid,
  taxAccountId: Uuid,
  deferralAccountId: Uuid,
  recognitionStrategy: z.enum(RECOGNITION_STRATEGIES).optional(),
};

/** GraphQL's `accountSetCreate` input: a `name` left out is null. */
export const AccountSetCreateInput = z.strictObject(accountSetFields);
export type AccountSetCreateInput = z.infer<typeof AccountSetCreateInput>;

/**
 * Body of `POST /accountsets` (contract 2.7): `name` is required, though it may be null. The
 * response calls the strategy `revenueRecognitionStrategy`; sent back, it is ignored when it agrees
 * with the request's `recognitionStrategy` and refused when it does not, because it would be
 * silently dropped otherwise.
 */
export const AccountSetCreateBody = z
  .strictObject({
    ...accountSetFields,
    name: boundedText(1, 250).nullable(),
    revenueRecognitionStrategy: z.enum(RECOGNITION_STRATEGIES).optional().meta({
      readOnly: true,
      description:
        'Read-only: the response name of recognitionStrategy. Echoed back it is ignored when it agrees and refused when it does not.',
    }),
  })
  .superRefine((body, ctx) => {
    const requested = body.recognitionStrategy ?? 'none';
    if (body.revenueRecognitionStrategy !== undefined && body.revenueRecognitionStrategy !== requested) {
      ctx.addIssue({
        code: 'custom',
        path: ['revenueRecognitionStrategy'],
        message: `is the response name of the strategy and is not read; set recognitionStrategy instead (it is ${requested})`,
      });
    }
  })
  .transform(({ revenueRecognitionStrategy: _echo, ...input }): AccountSetCreateInput => input);

/** Fields of the account set response that clients may echo back; they are ignored as input. */
export const ACCOUNT_SET_READ_ONLY_FIELDS = [
  'id',
  'salesAccount',
  'incomeAccount',
  'taxAccount',
  'deferralAccount',
] as const;

/** GraphQL's `ledgerSettingsUpdate` input: a field left out stays as it is. */
export const LedgerSettingsInput = z.strictObject({
  defaultAccountSetId: Uuid.optional(),
  receivableAccountId: Uuid.optional(),
  cashAccountId: Uuid.optional(),
  customerCreditAccountId: Uuid.optional(),
});
export type LedgerSettingsInput = z.infer<typeof LedgerSettingsInput>;

/** Filters of `journalEntries`; every one given must hold. */
export const JournalEntryFilter = z.strictObject({
  dateFrom: CalendarDate.nullish(),
  dateTo: CalendarDate.nullish(),
  accountId: Uuid.nullish(),
  invoiceId: Uuid.nullish(),
  customerId: Uuid.nullish(),
});
export type JournalEntryFilter = z.infer<typeof JournalEntryFilter>;
