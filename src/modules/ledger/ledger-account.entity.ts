import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../../db/tenant-keys.ts';

/** An account of the environment's general ledger; a barred account takes no new postings or account sets. */
export const LedgerAccountSchema = defineEntity({
  name: 'LedgerAccount',
  tableName: 'ledger_account',
  uniques: [
    {
      name: 'ledger_account_environment_accounting_code_unique',
      properties: ['environmentId', 'accountingCode'],
    },
  ],
  properties: {
    ...tenantKeys(),
    name: p.string().length(250),
    /** The account's number in the operator's chart of accounts. */
    accountingCode: p.string().length(64),
    barred: p.boolean(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().nullable(),
  },
});

export type LedgerAccount = InferEntity<typeof LedgerAccountSchema>;
