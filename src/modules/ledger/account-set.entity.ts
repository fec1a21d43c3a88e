import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../../db/tenant-keys.ts';

export const RECOGNITION_STRATEGIES = [
  'none',
  'even_distribution',
  'exact_daily_accrual',
  'daily_accrual',
] as const;
export type RecognitionStrategy = (typeof RECOGNITION_STRATEGIES)[number];

/** The four roles of an account set, each naming a ledger account of the same environment. */
export const ACCOUNT_ROLES = [
  'salesAccountId',
  'incomeAccountId',
  'taxAccountId',
  'deferralAccountId',
] as const;
export type AccountRole = (typeof ACCOUNT_ROLES)[number];

/**
 * Which ledger accounts sales, income, tax and deferred revenue are booked to, and how revenue is
 * recognised. The account ids are plain columns with composite foreign keys to
 * `ledger_account (environment_id, id)`, so a set can never point into another environment.
 */
export const AccountSetSchema = defineEntity({
  name: 'AccountSet',
  tableName: 'account_set',
  properties: {
    ...tenantKeys(),
    name: p.string().length(250).nullable(),
    salesAccountId: p.uuid(),
    incomeAccountId: p.uuid(),
    taxAccountId: p.uuid(),
    deferralAccountId: p.uuid(),
    recognitionStrategy: p.enum(RECOGNITION_STRATEGIES),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type AccountSet = InferEntity<typeof AccountSetSchema>;
