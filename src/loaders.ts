import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import { type Customer, CustomerSchema } from './modules/customer/customer.entity.ts';
import {
  type Invoice,
  type InvoiceItem,
  InvoiceItemSchema,
  InvoiceSchema,
  type Settlement,
  SettlementSchema,
} from './modules/invoice/invoice.entity.ts';

/** Groups rows by a key, in the order of `keys`; a key without rows gets an empty list. */
function groupBy<K, T>(keys: readonly K[], rows: T[], keyOf: (row: T) => K): T[][] {
  const groups = new Map<K, T[]>(keys.map((key) => [key, []]));
  for (const row of rows) groups.get(keyOf(row))?.push(row);
  return keys.map((key) => groups.get(key) ?? []);
}

/** Per-request batch loaders, always scoped to the request's environment. */
export class Loaders {
  readonly customerById: DataLoader<string, Customer | null>;
  readonly invoiceById: DataLoader<string, Invoice | null>;
  readonly itemsByInvoiceId: DataLoader<string, InvoiceItem[]>;
  readonly settlementsByInvoiceId: DataLoader<string, Settlement[]>;

  constructor(em: EntityManager, environmentId: string) {
    this.customerById = new DataLoader(async (ids) => {
      const rows = await em.find(CustomerSchema, { environmentId, id: { $in: [...ids] } });
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => byId.get(id) ?? null);
    });
    this.invoiceById = new DataLoader(async (ids) => {
      const rows = await em.find(InvoiceSchema, { environmentId, id: { $in: [...ids] } });
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => byId.get(id) ?? null);
    });
    this.itemsByInvoiceId = new DataLoader(async (invoiceIds) => {
      const rows = await em.find(
        InvoiceItemSchema,
        { environmentId, invoiceId: { $in: [...invoiceIds] } },
        { orderBy: { id: 'asc' } },
      );
      return groupBy(invoiceIds, rows, (row) => row.invoiceId);
    });
    this.settlementsByInvoiceId = new DataLoader(async (invoiceIds) => {
      const rows = await em.find(
        SettlementSchema,
        { environmentId, invoiceId: { $in: [...invoiceIds] } },
        { orderBy: { id: 'asc' } },
      );
      return groupBy(invoiceIds, rows, (row) => row.invoiceId);
    });
  }
}
