import './ledger.graphql.ts';
import './ledger-journal.graphql.ts';
import type { BillingModule } from '../module.ts';
import { AccountSetSchema } from './account-set.entity.ts';
import {
  JournalEntrySchema,
  JournalLineSchema,
  LedgerSettingsSchema,
  ProductAccountSetSchema,
} from './journal.entity.ts';
import { ledgerRoutes } from './ledger.rest.ts';
import { LedgerAccountSchema } from './ledger-account.entity.ts';

export const ledgerModule: BillingModule = {
  name: 'ledger',
  entities: [
    LedgerAccountSchema,
    AccountSetSchema,
    LedgerSettingsSchema,
    ProductAccountSetSchema,
    JournalEntrySchema,
    JournalLineSchema,
  ],
  routes: ledgerRoutes,
};
