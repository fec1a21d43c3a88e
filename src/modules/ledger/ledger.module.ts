import './ledger.graphql.ts';
import './ledger-journal.graphql.ts';
import './ledger-recognition.graphql.ts';
import type { BillingModule } from '../module.ts';
import { AccountSetSchema } from './account-set.entity.ts';
import {
  JournalEntrySchema,
  JournalLineSchema,
  LedgerSettingsSchema,
  ProductAccountSetSchema,
  RecognitionRowSchema,
} from './journal.entity.ts';
import { ledgerRoutes } from './ledger.rest.ts';
import { LedgerAccountSchema } from './ledger-account.entity.ts';
import { ledgerExportRoutes } from './ledger-export.rest.ts';
import { ledgerRecognitionTasks } from './ledger-recognition.jobs.ts';

export const ledgerModule: BillingModule = {
  name: 'ledger',
  entities: [
    LedgerAccountSchema,
    AccountSetSchema,
    LedgerSettingsSchema,
    ProductAccountSetSchema,
    JournalEntrySchema,
    JournalLineSchema,
    RecognitionRowSchema,
  ],
  routes: [...ledgerRoutes, ...ledgerExportRoutes],
  tasks: ledgerRecognitionTasks,
};
