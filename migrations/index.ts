import { Migration20261121000000Foundation } from './Migration20261121000000Foundation.ts';
import { Migration20261121000100TaxCodesProducts } from './Migration20261121000100TaxCodesProducts.ts';
import { Migration20261121000900Reliability } from './Migration20261121000900Reliability.ts';
import { Migration20261121001000Catalog } from './Migration20261121001000Catalog.ts';
import { Migration20261121002000Invoicing } from './Migration20261121002000Invoicing.ts';
import { Migration20261121003000Subscriptions } from './Migration20261121003000Subscriptions.ts';
import { Migration20261121009000TenantIsolation } from './Migration20261121009000TenantIsolation.ts';
import { Migration20261121009100SubscriptionsTenantIsolation } from './Migration20261121009100SubscriptionsTenantIsolation.ts';
import { Migration20261123000000TokenScopesEnvironmentKinds } from './Migration20261123000000TokenScopesEnvironmentKinds.ts';
import { Migration20261123090000QueryCostBudget } from './Migration20261123090000QueryCostBudget.ts';
import { Migration20261123100000TaxPolicy } from './Migration20261123100000TaxPolicy.ts';
import { Migration20261123110000CreditBalance } from './Migration20261123110000CreditBalance.ts';
import { Migration20261123120000InvoiceVoids } from './Migration20261123120000InvoiceVoids.ts';
import { Migration20261123130000TimeZones } from './Migration20261123130000TimeZones.ts';
import { Migration20261123140000Events } from './Migration20261123140000Events.ts';
import { Migration20261123150000OverdueEvents } from './Migration20261123150000OverdueEvents.ts';
import { Migration20261124000000JobQueue } from './Migration20261124000000JobQueue.ts';
import { Migration20261124120000Ledger } from './Migration20261124120000Ledger.ts';
import { Migration20261124120100LedgerRecognition } from './Migration20261124120100LedgerRecognition.ts';
import { Migration20261124140000InvoiceEmail } from './Migration20261124140000InvoiceEmail.ts';
import { Migration20261124150000LiveEvents } from './Migration20261124150000LiveEvents.ts';
import { Migration20261124160000LedgerRefunds } from './Migration20261124160000LedgerRefunds.ts';
import { Migration20261125100000Webhooks } from './Migration20261125100000Webhooks.ts';
import { Migration20261125110000Proration } from './Migration20261125110000Proration.ts';
import { Migration20261125120000SellerProfile } from './Migration20261125120000SellerProfile.ts';
import { Migration20261125130000Metering } from './Migration20261125130000Metering.ts';
import { Migration20261125140000ProductMetadata } from './Migration20261125140000ProductMetadata.ts';
import { Migration20261125150000MeteringThresholds } from './Migration20261125150000MeteringThresholds.ts';
import { Migration20261125160000NumberingSeries } from './Migration20261125160000NumberingSeries.ts';
import { Migration20261125170000ReplicaReadFence } from './Migration20261125170000ReplicaReadFence.ts';
import { Migration20261125170000RequestPath } from './Migration20261125170000RequestPath.ts';
import { Migration20261125170000SubscriptionTrials } from './Migration20261125170000SubscriptionTrials.ts';
import { Migration20261125170000TestClocks } from './Migration20261125170000TestClocks.ts';
import { Migration20261125170100InvoiceItemBilledPeriod } from './Migration20261125170100InvoiceItemBilledPeriod.ts';
import { Migration20261125183000SubscriptionRemovalChange } from './Migration20261125183000SubscriptionRemovalChange.ts';
import { Migration20261125183100InvoiceCreditBalance } from './Migration20261125183100InvoiceCreditBalance.ts';
import { Migration20261126000000EventOutbox } from './Migration20261126000000EventOutbox.ts';
import { Migration20261126100000BillingWorkIndexes } from './Migration20261126100000BillingWorkIndexes.ts';
import { Migration20261126130000BillingRunHandOut } from './Migration20261126130000BillingRunHandOut.ts';

/** Every migration, in order. Committed migrations are never edited after release. */
export const migrations = [
  { name: 'Migration20261121000000Foundation', class: Migration20261121000000Foundation },
  { name: 'Migration20261121000100TaxCodesProducts', class: Migration20261121000100TaxCodesProducts },
  { name: 'Migration20261121000900Reliability', class: Migration20261121000900Reliability },
  { name: 'Migration20261121001000Catalog', class: Migration20261121001000Catalog },
  { name: 'Migration20261121002000Invoicing', class: Migration20261121002000Invoicing },
  { name: 'Migration20261121003000Subscriptions', class: Migration20261121003000Subscriptions },
  { name: 'Migration20261121009000TenantIsolation', class: Migration20261121009000TenantIsolation },
  {
    name: 'Migration20261121009100SubscriptionsTenantIsolation',
    class: Migration20261121009100SubscriptionsTenantIsolation,
  },
  {
    name: 'Migration20261123000000TokenScopesEnvironmentKinds',
    class: Migration20261123000000TokenScopesEnvironmentKinds,
  },
  { name: 'Migration20261123090000QueryCostBudget', class: Migration20261123090000QueryCostBudget },
  { name: 'Migration20261123100000TaxPolicy', class: Migration20261123100000TaxPolicy },
  { name: 'Migration20261123110000CreditBalance', class: Migration20261123110000CreditBalance },
  { name: 'Migration20261123120000InvoiceVoids', class: Migration20261123120000InvoiceVoids },
  { name: 'Migration20261123130000TimeZones', class: Migration20261123130000TimeZones },
  { name: 'Migration20261123140000Events', class: Migration20261123140000Events },
  { name: 'Migration20261123150000OverdueEvents', class: Migration20261123150000OverdueEvents },
  { name: 'Migration20261124000000JobQueue', class: Migration20261124000000JobQueue },
  { name: 'Migration20261124140000InvoiceEmail', class: Migration20261124140000InvoiceEmail },
  { name: 'Migration20261124150000LiveEvents', class: Migration20261124150000LiveEvents },
  { name: 'Migration20261124120000Ledger', class: Migration20261124120000Ledger },
  { name: 'Migration20261124120100LedgerRecognition', class: Migration20261124120100LedgerRecognition },
  { name: 'Migration20261124160000LedgerRefunds', class: Migration20261124160000LedgerRefunds },
  { name: 'Migration20261125100000Webhooks', class: Migration20261125100000Webhooks },
  { name: 'Migration20261125140000ProductMetadata', class: Migration20261125140000ProductMetadata },
  { name: 'Migration20261125130000Metering', class: Migration20261125130000Metering },
  { name: 'Migration20261125110000Proration', class: Migration20261125110000Proration },
  { name: 'Migration20261125120000SellerProfile', class: Migration20261125120000SellerProfile },
  {
    name: 'Migration20261125150000MeteringThresholds',
    class: Migration20261125150000MeteringThresholds,
  },
  { name: 'Migration20261125160000NumberingSeries', class: Migration20261125160000NumberingSeries },
  { name: 'Migration20261125170000TestClocks', class: Migration20261125170000TestClocks },
  { name: 'Migration20261125170000ReplicaReadFence', class: Migration20261125170000ReplicaReadFence },
  { name: 'Migration20261125170000SubscriptionTrials', class: Migration20261125170000SubscriptionTrials },
  {
    name: 'Migration20261125170100InvoiceItemBilledPeriod',
    class: Migration20261125170100InvoiceItemBilledPeriod,
  },
  { name: 'Migration20261125170000RequestPath', class: Migration20261125170000RequestPath },
  {
    name: 'Migration20261125183000SubscriptionRemovalChange',
    class: Migration20261125183000SubscriptionRemovalChange,
  },
  {
    name: 'Migration20261125183100InvoiceCreditBalance',
    class: Migration20261125183100InvoiceCreditBalance,
  },
  { name: 'Migration20261126000000EventOutbox', class: Migration20261126000000EventOutbox },
  { name: 'Migration20261126100000BillingWorkIndexes', class: Migration20261126100000BillingWorkIndexes },
  { name: 'Migration20261126130000BillingRunHandOut', class: Migration20261126130000BillingRunHandOut },
];
