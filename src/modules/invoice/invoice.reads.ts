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
import { DomainError } from '../../errors.ts';
import { type Customer, CustomerSchema } from '../customer/customer.entity.ts';
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
 * Which properties of an entity's rows a read brings: those named (with `id` and `environmentId`), or
 * every column (null).
 */
export type Columns = ReadonlySet<string> | null;

/**
 * What a page of invoices will be asked for (a GraphQL selection): the columns of the invoices, and
 * what besides them with its columns (absent: not asked for), read in the page's statement, so resolving
 * them sends no statement more (see InvoiceReads.itemsOf and the others).
 */
export type InvoicePageParts = {
  /** The invoices' own columns; every column when null or absent. */
  columns?: Columns;
  items?: Columns;
  settlements?: Columns;
  /** The live customer of every invoice (`liveCustomer`). */
  customer?: Columns;
  /** The live customer of the drafts only (`customer`: a booked invoice shows its snapshot). */
  draftCustomer?: boolean;
};

/** What customerSummary reads of a customer: the draft's `customer` of a page. */
const CUSTOMER_SUMMARY: ReadonlySet<string> = new Set(['id', 'handle', 'name', 'billingAddress']);

/**
 * What a page's read brought with each of its invoices (keyed by the invoice's row), for the fields of
 * its selection: rows of the columns the selection reads, so never handed to the request's loaders,
 * where another field could find a row without the columns it reads. Whole rows go to the loaders too.
 */
type PageRow = {
  items?: readonly Readonly<InvoiceItem>[];
  settlements?: readonly Readonly<Settlement>[];
  customer?: Readonly<Customer> | null;
};
const pageRows = new WeakMap<object, PageRow>();

/** What an invoice's document (read) brings with it: its lines and settlements, and a draft's live customer. */
const DOCUMENT_PARTS: InvoicePageParts = { items: null, settlements: null, draftCustomer: true };

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
    const customer = await this.liveCustomerOf(invoice);
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

  /** The invoice's customer as it is now (null when missing), from the invoice's page when it read it. */
  liveCustomerOf(invoice: Invoice): Promise<Readonly<Customer> | null> | Readonly<Customer> {
    return (
      pageRows.get(invoice)?.customer ?? this.ctx.loaders.of(customerLoaders).byId.load(invoice.customerId)
    );
  }

  /** The invoice's lines in order, from the invoice's page when it read them. */
  itemsOf(invoice: Invoice): Promise<readonly Readonly<InvoiceItem>[]> | readonly Readonly<InvoiceItem>[] {
    return (
      pageRows.get(invoice)?.items ?? this.ctx.loaders.of(invoiceLoaders).itemsByInvoiceId.load(invoice.id)
    );
  }

  /** The invoice's settlements, oldest first, from the invoice's page when it read them. */
  settlementsOf(
    invoice: Invoice,
  ): Promise<readonly Readonly<Settlement>[]> | readonly Readonly<Settlement>[] {
    return (
      pageRows.get(invoice)?.settlements ??
      this.ctx.loaders.of(invoiceLoaders).settlementsByInvoiceId.load(invoice.id)
    );
  }

  async document(invoice: Invoice): Promise<InvoiceDocument> {
    const [customer, items, settlements] = await Promise.all([
      this.customerOf(invoice),
      this.ctx.loaders.of(invoiceLoaders).itemsByInvoiceId.load(invoice.id),
      this.ctx.loaders.of(invoiceLoaders).settlementsByInvoiceId.load(invoice.id),
    ]);
    return { invoice, customer, items, settlements };
  }

  /**
   * The invoice `id` with its lines, settlements and (a draft's) live customer, all read in one statement:
   * the page's read of one invoice (pageRead), whose parts then answer from the request's loaders.
   */
  async read(id: string): Promise<InvoiceDocument> {
    // The document's parts are asked for, so there is a page statement for them.
    const readPage = this.pageRead(DOCUMENT_PARTS) as PageReader;
    const [invoice] = await readPage(
      { environmentId: this.ctx.environmentId, id },
      { orderBy: 'id', descending: false, limit: 1 },
    );
    if (!invoice) throw DomainError.notFound('Invoice', id);
    return this.document(invoice as Invoice);
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
   * The page's read: the invoices alone (leanFind) or, when `parts` asks for more or for fewer columns,
   * one statement that builds each invoice as JSON of the columns its selection reads, with its items,
   * settlements and customer (read once for the page: see buildPageStatement). What it brings goes
   * with its invoice (pageRows) for the selection's fields to find; whole rows (a selection with a field
   * that does not say what it reads) also prime the request's loaders, as leanFind's rows would.
   */
  private pageRead(parts: InvoicePageParts) {
    const statement = pageStatement(this.ctx.em, parts);
    if (!statement) return undefined;
    const { em } = this.ctx;
    const { select, aroundPage, invoiceJson, itemJson, settlementJson, customerJson, children, customers } =
      statement;
    const { wholeItems, wholeSettlements, wholeCustomers } = statement;
    const loaders = this.ctx.loaders.of(invoiceLoaders);
    const customerById = this.ctx.loaders.of(customerLoaders).byId;
    return async (
      filter: LeanFilter<Invoice>,
      options: { orderBy: 'id'; descending: boolean; limit: number },
    ): Promise<Readonly<Invoice>[]> => {
      const around = aroundPage && ((page: string) => aroundPage(page, options.descending));
      return leanSelect(em, InvoiceSchema, filter, { ...options, select, around }, (row) => {
        const read = invoiceJson.revive(row.invoice as unknown[]);
        if (!children && !customers) return read;
        const brought: PageRow = {};
        if (parts.items !== undefined) {
          brought.items = (row.items as unknown[][]).map(itemJson.revive);
          if (wholeItems) loaders.itemsByInvoiceId.prime(read.id, brought.items as InvoiceItem[]);
        }
        if (parts.settlements !== undefined) {
          brought.settlements = (row.settlements as unknown[][]).map(settlementJson.revive);
          if (wholeSettlements)
            loaders.settlementsByInvoiceId.prime(read.id, brought.settlements as Settlement[]);
        }
        if (row.customer) {
          brought.customer = customerJson.revive(row.customer as unknown[]);
          if (wholeCustomers) customerById.prime(read.customerId, brought.customer);
        }
        pageRows.set(read, brought);
        return read;
      });
    };
  }
}

/** A page's read, when its parts need a statement of their own (see pageRead). */
type PageReader = NonNullable<ReturnType<InvoiceReads['pageRead']>>;

/** What a page's statement is built of (see pageRead), the same for every page read with the same parts. */
type PageStatement = ReturnType<typeof buildPageStatement>;

const pageStatements = new WeakMap<InvoicePageParts, PageStatement | undefined>();

/**
 * The page's statement for `parts`, built once per parts object: a parsed document's selection hands
 * every request the same one (perSelection in invoice.graphql.ts). Built from the entities' metadata,
 * which every EntityManager of the ORM shares.
 */
function pageStatement(em: ServiceContext['em'], parts: InvoicePageParts): PageStatement | undefined {
  if (pageStatements.has(parts)) return pageStatements.get(parts);
  const statement = buildPageStatement(em, parts);
  pageStatements.set(parts, statement);
  return statement;
}

function buildPageStatement(em: ServiceContext['em'], parts: InvoicePageParts) {
  const children = parts.items !== undefined || parts.settlements !== undefined;
  const customers = parts.customer !== undefined || parts.draftCustomer === true;
  const whole = parts.columns == null;
  if (!children && !customers && whole) return undefined;
  const invoice = tableOf(em, InvoiceSchema);
  // A field that may read anything of an invoice may also load its children: they are read whole.
  const narrow = (columns: Columns | undefined) => (whole ? null : (columns ?? null));
  const invoiceJson = jsonShape(em, InvoiceSchema).only(narrow(parts.columns));
  const itemJson = jsonShape(em, InvoiceItemSchema).only(narrow(parts.items));
  const settlementJson = jsonShape(em, SettlementSchema).only(narrow(parts.settlements));
  const customerColumns =
    parts.customer === null || (whole && customers)
      ? null
      : new Set([...(parts.customer ?? []), ...(parts.draftCustomer ? CUSTOMER_SUMMARY : [])]);
  const customerJson = jsonShape(em, CustomerSchema).only(customerColumns);
  const wholeItems = itemJson === jsonShape(em, InvoiceItemSchema);
  const wholeSettlements = settlementJson === jsonShape(em, SettlementSchema);
  const wholeCustomers = customerJson === jsonShape(em, CustomerSchema);
  const invoiceRow = `${invoiceJson.object(invoice)} as "invoice"`;
  // With items, settlements or a customer, the page's invoices are read first ("page") and those once for
  // the whole page, grouped by invoice: a subquery per invoice ran its scan once per invoice (on a small
  // table a scan of all its rows each time, the planner's choice), a quarter of the statement's CPU.
  const draftsOnly = parts.customer === undefined;
  const select =
    children || customers
      ? [
          invoiceRow,
          `${invoice}."id"`,
          `${invoice}."environment_id"`,
          `${invoice}."customer_id"`,
          ...(customers && draftsOnly ? [`${invoice}."customer_snapshot" is null as "draft"`] : []),
        ].join(', ')
      : invoiceRow;
  const childRows = (table: string, shape: string, alias: string) =>
    `left join (select "c"."invoice_id", "c"."environment_id", json_agg(${shape} order by "c"."id") as "rows" ` +
    `from ${table} as "c" where "c"."invoice_id" = any(array(select "id" from "page")) ` +
    `group by "c"."invoice_id", "c"."environment_id") as "${alias}" ` +
    `on "${alias}"."invoice_id" = "page"."id" and "${alias}"."environment_id" = "page"."environment_id"`;
  const columns = [
    '"page"."invoice"',
    ...(parts.items !== undefined ? [`coalesce("page_items"."rows", '[]'::json) as "items"`] : []),
    ...(parts.settlements !== undefined
      ? [`coalesce("page_settlements"."rows", '[]'::json) as "settlements"`]
      : []),
    ...(customers
      ? [
          `case when "page_customer"."id" is not null then ${customerJson.object('"page_customer"')} end ` +
            'as "customer"',
        ]
      : []),
  ].join(', ');
  const joins = [
    ...(parts.items !== undefined
      ? [childRows(tableOf(em, InvoiceItemSchema), itemJson.object('"c"'), 'page_items')]
      : []),
    ...(parts.settlements !== undefined
      ? [childRows(tableOf(em, SettlementSchema), settlementJson.object('"c"'), 'page_settlements')]
      : []),
    ...(customers
      ? [
          `left join ${tableOf(em, CustomerSchema)} as "page_customer" ` +
            `on "page_customer"."environment_id" = "page"."environment_id" and "page_customer"."id" = "page"."customer_id"` +
            `${draftsOnly ? ' and "page"."draft"' : ''}`,
        ]
      : []),
  ].join(' ');
  const aroundPage =
    children || customers
      ? (page: string, descending: boolean) =>
          `with "page" as (${page}) select ${columns} from "page" ${joins} ` +
          `order by "page"."id"${descending ? ' desc' : ''}`
      : undefined;
  return {
    select,
    aroundPage,
    invoiceJson,
    itemJson,
    settlementJson,
    customerJson,
    children,
    customers,
    wholeItems,
    wholeSettlements,
    wholeCustomers,
  };
}
