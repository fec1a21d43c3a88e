import type { LoaderSet } from '../../context.ts';
import { leanById, leanByParent } from '../../db/loaders.ts';
import { InvoiceItemSchema, InvoiceSchema, SettlementSchema } from './invoice.entity.ts';

/** The invoice module's batched reads, built once per request (RequestLoaders): read-only rows of this environment. */
export const invoiceLoaders = ((em, environmentId) => ({
  byId: leanById(em, environmentId, InvoiceSchema),
  itemsByInvoiceId: leanByParent(em, environmentId, InvoiceItemSchema, 'invoiceId'),
  settlementsByInvoiceId: leanByParent(em, environmentId, SettlementSchema, 'invoiceId'),
})) satisfies LoaderSet<unknown>;
