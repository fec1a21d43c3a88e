import type { EntityName, FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import { type Customer, CustomerSchema } from './modules/customer/customer.entity.ts';
import { type AccountSet, AccountSetSchema } from './modules/ledger/account-set.entity.ts';
import { type LedgerAccount, LedgerAccountSchema } from './modules/ledger/ledger-account.entity.ts';
import { type Price, PriceSchema } from './modules/price/price.entity.ts';
import { type Product, ProductSchema } from './modules/product/product.entity.ts';

/** Loads rows of `entity` by id in one query per tick; an id of another environment loads as null. */
function byId<T extends { id: string; environmentId: string }>(
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

/** Per-request batch loaders, always scoped to the request's environment. */
export class Loaders {
  readonly customerById: DataLoader<string, Customer | null>;
  readonly productById: DataLoader<string, Product | null>;
  readonly priceById: DataLoader<string, Price | null>;
  readonly ledgerAccountById: DataLoader<string, LedgerAccount | null>;
  readonly accountSetById: DataLoader<string, AccountSet | null>;

  constructor(em: EntityManager, environmentId: string) {
    this.customerById = byId(em, environmentId, CustomerSchema);
    this.productById = byId(em, environmentId, ProductSchema);
    this.priceById = byId(em, environmentId, PriceSchema);
    this.ledgerAccountById = byId(em, environmentId, LedgerAccountSchema);
    this.accountSetById = byId(em, environmentId, AccountSetSchema);
  }
}
