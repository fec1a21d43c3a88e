import type { FilterQuery } from '@mikro-orm/core';
import type { LoaderSet, ServiceContext } from '../../context.ts';
import { today } from '../../dates/calendar.ts';
import { jsonShape, type LeanFilter, leanSelect, tableOf } from '../../db/lean.ts';
import { leanById, leanByParent, loadOrNotFound } from '../../db/loaders.ts';
import {
  type Connection,
  keysetPage,
  leanKeysetPage,
  type PageArgs,
  type Sort,
} from '../../db/pagination.ts';
import { CustomerSchema } from '../customer/customer.entity.ts';
import { customerLoaders } from '../customer/customer.reads.ts';
import type { InvoiceSeller } from '../seller/seller.entity.ts';
import { currentSeller, sellerLogo } from '../seller/seller.service.ts';
import { customerSnapshot, customerSummary } from './invoice.change.ts';
import {
  type Invoice,
  type InvoiceCustomer,
  type InvoiceItem,
  InvoiceItemSchema,
  InvoiceSchema,
  type Settlement,
  SettlementSchema,
} from './invoice.entity.ts';
import type { InvoiceFilter } from './invoice.input.ts';
import { notOverdueWhere, overdueWhere } from './invoice-overdue.where.ts';

/** The invoice module's batched reads, built once per request (RequestLoaders): read-only rows of this environment. */
export const invoiceLoaders = ((em, environmentId) => ({
  byId: leanById(em, environmentId, InvoiceSchema),
  itemsByInvoiceId: leanByParent(em, environmentId, InvoiceItemSchema, 'invoiceId'),
  settlementsByInvoiceId: leanByParent(em, environmentId, SettlementSchema, 'invoiceId'),
})) satisfies LoaderSet<unknown>;

/**
 * What a page of invoices will be asked for besides the invoices themselves (a GraphQL selection):
 * read in the page's statement and handed to the loaders, so resolving them sends no statement more.
 */
export type InvoicePageParts = {
  items?: boolean;
  settlements?: boolean;
  /** The live customer of every invoice (`liveCustomer`). */
  customer?: boolean;
  /** The live customer of the drafts only (`customer`: a booked invoice shows its snapshot). */
  draftCustomer?: boolean;
};

/** An invoice with everything its documents show (contract 2.1). */
export type InvoiceDocument = {
  invoice: Invoice;
  customer: InvoiceCustomer;
  items: InvoiceItem[];
  settlements: Settlement[];
};

/** The invoice as its JSON answer shows it, plus what only the printed document names. */
export type PrintableInvoice = InvoiceDocument & {
  /** The seller: frozen when booked, the live profile while a draft. */
  seller: InvoiceSeller;
  /** The seller's logo, base64-encoded, when it has one. */
  logo: { mediaType: string; data: string } | null;
  /** For a credit note: the number and date of the invoice it credits. */
  creditedInvoiceHandle: string | null;
  creditedInvoiceDate: string | null;
};

/** The module's one home for reading invoices and credit notes: one, its document, a page of them. */
export class InvoiceReads {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  get(id: string): Promise<Invoice> {
    return loadOrNotFound(this.ctx.loaders.of(invoiceLoaders).byId, 'Invoice', id);
  }

  /** The customer as the invoice shows it: frozen when booked, the live customer while a draft. */
  async customerOf(invoice: Invoice): Promise<InvoiceCustomer> {
    if (invoice.customerSnapshot) return invoice.customerSnapshot;
    const customer = await this.ctx.loaders.of(customerLoaders).byId.load(invoice.customerId);
    if (!customer) throw new Error(`customer ${invoice.customerId} of invoice ${invoice.id} is missing`);
    return customerSummary(customer);
  }

  /**
   * The customer with the company and VAT ids the documents print: a draft's from the live customer;
   * a booked invoice's from its snapshot (invoices booked before snapshots held them print none).
   */
  private async printedCustomerOf(invoice: Invoice, customer: InvoiceCustomer): Promise<InvoiceCustomer> {
    if (invoice.customerSnapshot) return customer;
    const live = await this.ctx.loaders.of(customerLoaders).byId.load(invoice.customerId);
    return live ? customerSnapshot(live) : customer;
  }

  async document(invoice: Invoice): Promise<InvoiceDocument> {
    const [customer, items, settlements] = await Promise.all([
      this.customerOf(invoice),
      this.ctx.loaders.of(invoiceLoaders).itemsByInvoiceId.load(invoice.id),
      this.ctx.loaders.of(invoiceLoaders).settlementsByInvoiceId.load(invoice.id),
    ]);
    return { invoice, customer, items, settlements };
  }

  async read(id: string): Promise<InvoiceDocument> {
    // The id is all the lines and settlements need: they load alongside the invoice, not after it.
    const [invoice, items, settlements] = await Promise.all([
      this.get(id),
      this.ctx.loaders.of(invoiceLoaders).itemsByInvoiceId.load(id),
      this.ctx.loaders.of(invoiceLoaders).settlementsByInvoiceId.load(id),
    ]);
    return { invoice, customer: await this.customerOf(invoice), items, settlements };
  }

  /** The invoice with what its PDF names besides: the seller, and the invoice a credit note credits. */
  async readPrintable(id: string): Promise<PrintableInvoice> {
    const document = await this.read(id);
    const { creditedInvoiceId } = document.invoice;
    const [seller, credited] = await Promise.all([
      document.invoice.sellerSnapshot ?? currentSeller(this.ctx.em, this.ctx.environmentId),
      creditedInvoiceId ? this.ctx.loaders.of(invoiceLoaders).byId.load(creditedInvoiceId) : null,
    ]);
    const logo = seller.logoId ? await sellerLogo(this.ctx.em, this.ctx.environmentId, seller.logoId) : null;
    return {
      ...document,
      customer: await this.printedCustomerOf(document.invoice, document.customer),
      seller,
      logo: logo ? { mediaType: logo.mediaType, data: logo.data } : null,
      creditedInvoiceHandle: credited?.handle ?? null,
      creditedInvoiceDate: credited?.date ?? null,
    };
  }

  /** The booked invoice or credit note with this number, or null when the environment has none. */
  byNumber(number: string): Promise<Readonly<Invoice> | null> {
    return this.ctx.em.findOne(InvoiceSchema, { environmentId: this.ctx.environmentId, handle: number });
  }

  list(
    filter: InvoiceFilter,
    page: PageArgs,
    sort?: Sort<Invoice>,
    parts: InvoicePageParts = {},
  ): Promise<Connection<Invoice>> {
    const where = {
      environmentId: this.ctx.environmentId,
      ...(filter.customerId ? { customerId: filter.customerId } : {}),
      ...(filter.type ? { type: filter.type } : {}),
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.settlementStatus ? { settlementStatus: filter.settlementStatus } : {}),
      ...(filter.dateFrom || filter.dateTo
        ? {
            date: {
              ...(filter.dateFrom ? { $gte: filter.dateFrom } : {}),
              ...(filter.dateTo ? { $lte: filter.dateTo } : {}),
            },
          }
        : {}),
    };
    const creationOrder = !sort || (sort.field === 'id' && sort.direction === 'asc');
    if (filter.overdue == null && creationOrder)
      return leanKeysetPage(this.ctx.em, InvoiceSchema, where, page, this.pageRead(parts));
    // Overdue compares two columns and other orders compare two keys, which the lean reader does not
    // express; the entity query does.
    const conditions: FilterQuery<Invoice>[] = [where as FilterQuery<Invoice>];
    if (filter.overdue != null)
      conditions.push(filter.overdue ? overdueWhere(today()) : notOverdueWhere(today()));
    return keysetPage(this.ctx.em, InvoiceSchema, { $and: conditions }, page, sort);
  }

  /**
   * The page's read: the invoices alone (leanFind) or, when `parts` asks for more, one statement that
   * also brings each invoice's items, settlements and customer as JSON (correlated subqueries, as
   * PostGraphile reads a page). What it brings primes the request's loaders, so the field resolvers
   * find it there; the rows are exactly the loaders' own (jsonShape), so every answer stays the same.
   */
  private pageRead(parts: InvoicePageParts) {
    if (!parts.items && !parts.settlements && !parts.customer && !parts.draftCustomer) return undefined;
    const { em } = this.ctx;
    const invoice = tableOf(em, InvoiceSchema);
    const invoiceJson = jsonShape(em, InvoiceSchema);
    const itemJson = jsonShape(em, InvoiceItemSchema);
    const settlementJson = jsonShape(em, SettlementSchema);
    const customerJson = jsonShape(em, CustomerSchema);
    const children = (table: string, shape: string) =>
      `(select coalesce(json_agg(${shape} order by "c"."id"), '[]'::json) from ${table} as "c" ` +
      `where "c"."environment_id" = ${invoice}."environment_id" and "c"."invoice_id" = ${invoice}."id")`;
    const select = [
      `${invoiceJson.object(invoice)} as "invoice"`,
      ...(parts.items
        ? [`${children(tableOf(em, InvoiceItemSchema), itemJson.object('"c"'))} as "items"`]
        : []),
      ...(parts.settlements
        ? [`${children(tableOf(em, SettlementSchema), settlementJson.object('"c"'))} as "settlements"`]
        : []),
      ...(parts.customer || parts.draftCustomer
        ? [
            `(select ${customerJson.object('"c"')} from ${tableOf(em, CustomerSchema)} as "c" ` +
              `where "c"."environment_id" = ${invoice}."environment_id" and "c"."id" = ${invoice}."customer_id"` +
              `${parts.customer ? '' : ` and ${invoice}."customer_snapshot" is null`}) as "customer"`,
          ]
        : []),
    ].join(', ');
    const loaders = this.ctx.loaders.of(invoiceLoaders);
    const customers = this.ctx.loaders.of(customerLoaders);
    return async (
      filter: LeanFilter<Invoice>,
      options: { orderBy: 'id'; descending: boolean; limit: number },
    ): Promise<Readonly<Invoice>[]> =>
      leanSelect(em, InvoiceSchema, filter, { ...options, select }, (row) => {
        const read = invoiceJson.revive(row.invoice as unknown[]);
        if (parts.items) {
          const items = (row.items as unknown[][]).map(itemJson.revive);
          loaders.itemsByInvoiceId.prime(read.id, items);
        }
        if (parts.settlements) {
          const settlements = (row.settlements as unknown[][]).map(settlementJson.revive);
          loaders.settlementsByInvoiceId.prime(read.id, settlements);
        }
        if (row.customer) {
          customers.byId.prime(read.customerId, customerJson.revive(row.customer as unknown[]));
        }
        return read;
      });
  }
}
