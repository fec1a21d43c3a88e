import { ApiTokenSchema } from '../auth/api-token.entity.ts';
import { EnvironmentSchema } from '../auth/environment.entity.ts';
import { AuditEventSchema } from '../modules/audit/audit-event.entity.ts';
import { BilledPeriodSchema, BillingRunSchema } from '../modules/billing/billing-run.entity.ts';
import { CustomerSchema } from '../modules/customer/customer.entity.ts';
import {
  InvoiceItemSchema,
  InvoiceNumberingSchema,
  InvoiceSchema,
  SettlementSchema,
} from '../modules/invoice/invoice.entity.ts';
import { AccountSetSchema } from '../modules/ledger/account-set.entity.ts';
import { LedgerAccountSchema } from '../modules/ledger/ledger-account.entity.ts';
import { PriceSchema } from '../modules/price/price.entity.ts';
import { ProductSchema } from '../modules/product/product.entity.ts';
import {
  SubscriptionItemSchema,
  SubscriptionSchema,
  UsageRecordSchema,
} from '../modules/subscription/subscription.entity.ts';
import { TaxCodeSchema } from '../modules/tax/tax-code.entity.ts';

export const entities = [
  EnvironmentSchema,
  ApiTokenSchema,
  CustomerSchema,
  TaxCodeSchema,
  ProductSchema,
  PriceSchema,
  LedgerAccountSchema,
  AccountSetSchema,
  InvoiceSchema,
  InvoiceItemSchema,
  SettlementSchema,
  InvoiceNumberingSchema,
  SubscriptionSchema,
  SubscriptionItemSchema,
  UsageRecordSchema,
  BillingRunSchema,
  BilledPeriodSchema,
  AuditEventSchema,
];
