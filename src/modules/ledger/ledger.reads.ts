import type { LoaderSet } from '../../context.ts';
import { leanById } from '../../db/loaders.ts';
import { AccountSetSchema } from './account-set.entity.ts';
import { LedgerAccountSchema } from './ledger-account.entity.ts';

/** The ledger module's batched reads, built once per request (RequestLoaders): read-only rows of this environment. */
export const ledgerLoaders = ((em, environmentId) => ({
  accountById: leanById(em, environmentId, LedgerAccountSchema),
  accountSetById: leanById(em, environmentId, AccountSetSchema),
})) satisfies LoaderSet<unknown>;
