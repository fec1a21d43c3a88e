import type { EntityName, FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import { type LeanFilter, leanFind } from './db/lean.ts';
import { DomainError } from './errors.ts';
import { type Customer, CustomerSchema } from './modules/customer/customer.entity.ts';
import {
  type Invoice,
  type InvoiceItem,
  InvoiceItemSchema,
  InvoiceSchema,
  type Settlement,
  SettlementSchema,
} from './modules/invoice/invoice.entity.ts';
import { type AccountSet, AccountSetSchema } from './modules/ledger/account-set.entity.ts';
import { type LedgerAccount, LedgerAccountSchema } from './modules/ledger/ledger-account.entity.ts';
import { type Price, PriceSchema } from './modules/price/price.entity.ts';
import { type Product, ProductSchema } from './modules/product/product.entity.ts';
import {
  type Subscription,
  type SubscriptionItem,
  SubscriptionItemSchema,
  SubscriptionSchema,
} from './modules/subscription/subscription.entity.ts';

type TenantRow = { id: string; environmentId: string };

/**
 * Loads rows of `entity` by id in one query per tick; an id of another environment loads as null.
 * The rows are managed entities: services change them and flush.
 */
function byId<T extends TenantRow>(
  em: EntityManager,
  environmentId: string,
  entity: EntityName<T>,
): DataLoader<string, T | null> {
  return new DataLoader(async (ids) => {
    const rows = await em.find(entity, { environmentId, id: { $in: [...ids] } } as FilterQuery<T>);
    const byKey = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byKey.get(id) ?? null);
  });
}

/** Like `byId`, for rows that are only read: frozen plain rows (see leanFind), a fraction of the CPU. */
function leanById<T extends TenantRow>(
  em: EntityManager,
  environmentId: string,
  entity: EntityName<T>,
): DataLoader<string, T | null> {
  return new DataLoader(async (ids) => {
    const rows = await leanFind(em, entity, { environmentId, id: ids } as LeanFilter<T>);
    const byKey = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byKey.get(id) ?? null);
  });
}

/** Reads the rows of `entity` that belong to each invoice, in id order, in one query per tick. */
function byInvoiceId<T extends TenantRow & { invoiceId: string }>(
  em: EntityManager,
  environmentId: string,
  entity: EntityName<T>,
): DataLoader<string, T[]> {
  return new DataLoader(async (invoiceIds) => {
    const rows = await leanFind(em, entity, { environmentId, invoiceId: invoiceIds } as LeanFilter<T>, {
      orderBy: 'id',
    });
    const groups = new Map<string, T[]>(invoiceIds.map((key) => [key, []]));
    for (const row of rows) groups.get(row.invoiceId)?.push(row);
    return invoiceIds.map((key) => groups.get(key) ?? []);
  });
}

/** Loads the items of each subscription, in id order, in one query per tick. */
function itemsBySubscriptionId(
  em: EntityManager,
  environmentId: string,
): DataLoader<string, SubscriptionItem[]> {
  return new DataLoader(async (subscriptionIds) => {
    const rows = await em.find(
      SubscriptionItemSchema,
      { environmentId, subscriptionId: { $in: [...subscriptionIds] } },
      { orderBy: { id: 'asc' } },
    );
    const groups = new Map<string, SubscriptionItem[]>(subscriptionIds.map((key) => [key, []]));
    for (const row of rows) groups.get(row.subscriptionId)?.push(row);
    return subscriptionIds.map((key) => groups.get(key) ?? []);
  });
}

/**
 * Per-request batch loaders, always scoped to the request's environment. Customers, invoices, their
 * items and settlements are read-only plain rows (the hot read paths); the catalog loaders give the
 * managed entities their services change.
 */
export class Loaders {
  readonly customerById: DataLoader<string, Customer | null>;
  readonly productById: DataLoader<string, Product | null>;
  readonly priceById: DataLoader<string, Price | null>;
  readonly ledgerAccountById: DataLoader<string, LedgerAccount | null>;
  readonly accountSetById: DataLoader<string, AccountSet | null>;
  readonly invoiceById: DataLoader<string, Invoice | null>;
  readonly itemsByInvoiceId: DataLoader<string, InvoiceItem[]>;
  readonly settlementsByInvoiceId: DataLoader<string, Settlement[]>;
  readonly subscriptionById: DataLoader<string, Subscription | null>;
  readonly itemsBySubscriptionId: DataLoader<string, SubscriptionItem[]>;

  constructor(em: EntityManager, environmentId: string) {
    this.customerById = leanById(em, environmentId, CustomerSchema);
    this.productById = byId(em, environmentId, ProductSchema);
    this.priceById = byId(em, environmentId, PriceSchema);
    this.ledgerAccountById = byId(em, environmentId, LedgerAccountSchema);
    this.accountSetById = byId(em, environmentId, AccountSetSchema);
    this.invoiceById = leanById(em, environmentId, InvoiceSchema);
    this.itemsByInvoiceId = byInvoiceId(em, environmentId, InvoiceItemSchema);
    this.settlementsByInvoiceId = byInvoiceId(em, environmentId, SettlementSchema);
    this.subscriptionById = byId(em, environmentId, SubscriptionSchema);
    this.itemsBySubscriptionId = itemsBySubscriptionId(em, environmentId);
  }
}

/**
 * The row `loader` loads for `id`, or NOT_FOUND naming it `what` ("Customer 0190… does not exist"): a
 * missing id and one of another environment answer alike.
 */
export async function loadOrNotFound<T>(
  loader: DataLoader<string, T | null>,
  what: string,
  id: string,
): Promise<T> {
  const row = await loader.load(id);
  if (!row) throw DomainError.notFound(what, id);
  return row;
}
