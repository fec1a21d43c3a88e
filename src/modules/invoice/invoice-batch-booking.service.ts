import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { isUniqueViolation } from '../../db/flush.ts';
import { balanceKey, CreditBalanceService } from '../balance/balance.service.ts';
import type { Customer } from '../customer/customer.entity.ts';
import { type EventInput, type LeanChange, writeChange } from '../event/event.service.ts';
import { JournalEntrySchema, JournalLineSchema } from '../ledger/journal.entity.ts';
import type { PostingLine } from '../ledger/ledger.posting.ts';
import { assertOpen, bookingPosting, entryRows, takeEntryNumbers } from '../ledger/ledger-journal.service.ts';
import { currentSeller } from '../seller/seller.service.ts';
import { type Invoice, type InvoiceItem, InvoiceItemSchema, InvoiceSchema } from './invoice.entity.ts';
import { invoiceEvent } from './invoice.events.ts';
import type { InvoiceCreateInput } from './invoice.input.ts';
import { bookedFields } from './invoice-booking.service.ts';
import type { InvoiceDraftService, ItemLink } from './invoice-drafts.service.ts';
import { takeNextHandles } from './invoice-numbering.service.ts';

/**
 * Lines a set-based write takes at most: its statement's parameters (about 50 a line with its share of
 * its invoice's, journal's, audit and event rows) stay below PostgreSQL's 65,535. A row written alongside
 * (writeWith), with its audit row, takes about 20 and counts as half a line, so that a batch of
 * BILLING_BATCH ordinary customers is one write (two cost PostgreSQL a fifth more CPU per invoice).
 */
const LINES_PER_WRITE = 1000;

/**
 * Thrown when set-based booking cannot go on (the batch's numbers collide with numbers used before, or
 * a balance was made with money in it meanwhile): the batch is billed again invoice by invoice.
 */
export class SetBasedBookingRefused extends Error {}

/** A row a set-based write writes alongside the invoices: created (by entity) or changed. */
type Created = NonNullable<LeanChange['created']>[number];
type Updated = NonNullable<LeanChange['updated']>[number];

/** A plain invoice of the batch, drafted and posted in memory, waiting for its number. */
type Pending = {
  invoice: Invoice;
  lines: InvoiceItem[];
  created: EventInput;
  customer: Customer;
  posting: PostingLine[];
};

/**
 * Set-based booking of a scheduled billing run's batch (markBatch). A plain invoice (see add) is drafted
 * and posted in memory with the functions drafting and booking use, then written with the batch's other
 * plain invoices: their numbers taken as one block once they are known, the invoices, lines, journal
 * entries and lines, events and audit events each one multi-row insert (writeChange). Any other invoice
 * goes down the per-invoice path (InvoiceBookingService.book), after the pending ones are written, so
 * numbers follow the customers' order as they would invoice by invoice.
 */
export class BatchBooking {
  private readonly ctx: ServiceContext;
  private readonly tx: EntityManager;
  /** The batch's balances (balanceKey), read and locked once. */
  private readonly balances: Map<string, number>;
  /** Balances the per-invoice path may have moved in this batch: their invoices take that path too. */
  private readonly moved = new Set<string>();
  private pending: Pending[] = [];
  private pendingLines = 0;
  /** What the plain invoices' customers wrote besides them (writeWith), by entity for one insert each. */
  private alongside = {
    created: new Map<Created['entity'], Created['rows'][number][]>(),
    updated: [] as Updated[],
  };

  private constructor(ctx: ServiceContext, tx: EntityManager, balances: Map<string, number>) {
    this.ctx = ctx;
    this.tx = tx;
    this.balances = balances;
  }

  /** The booking of a batch of `customerIds`: their balances read and locked once. */
  static async of(ctx: ServiceContext, tx: EntityManager, customerIds: readonly string[]) {
    return new BatchBooking(ctx, tx, await new CreditBalanceService(ctx).lockAmounts(tx, customerIds));
  }

  /**
   * Drafts the invoice in memory and keeps it for the batch's write when booking it is plain: nothing on
   * the customer's balance to apply, a total not negative (nothing to credit to the balance), no line
   * with deferred revenue (no schedules). A fresh draft's tax policy is the one booking reads (same
   * transaction), and booking it settles nothing, so neither needs the per-invoice path. Answers the
   * invoice, or null when it must be drafted and booked invoice by invoice (see beforeBooking).
   */
  async add(
    drafts: InvoiceDraftService,
    customer: Customer,
    input: InvoiceCreateInput,
    links: readonly ItemLink[],
  ): Promise<Invoice | null> {
    const { environmentId } = this.ctx;
    const { invoice, lines, event } = await drafts.draftRows(input, links);
    const key = balanceKey(invoice.customerId, invoice.currency);
    if (this.moved.has(key) || (this.balances.get(key) ?? 0) !== 0 || invoice.totalInclVat < 0) return null;
    // Booking reads the lines back in id order.
    lines.sort((a, b) => (a.id < b.id ? -1 : 1));
    const { lines: posting, deferred } = await bookingPosting(this.tx, environmentId, lines, false);
    if (deferred.length > 0) return null;
    await assertOpen(this.tx, environmentId, posting);
    this.pending.push({ invoice, lines, created: event, customer, posting });
    this.pendingLines += lines.length;
    if (this.pendingLines >= LINES_PER_WRITE) await this.flush();
    return invoice;
  }

  /**
   * Before an invoice of the customer is booked invoice by invoice: writes the pending ones (so its
   * number follows theirs) and sends the customer's later invoices in the currency the same way (its
   * balance may move).
   */
  async beforeBooking(customerId: string, currency: string): Promise<void> {
    this.moved.add(balanceKey(customerId, currency));
    await this.flush();
  }

  /**
   * Writes `change` with the batch's plain invoices instead of through the unit of work: what billing a
   * customer whose invoices were all plain changed besides them (its billed periods, its items' next
   * bills, its subscriptions' renewals and ends), with the audit events the unit of work would write.
   */
  writeWith(change: { created: readonly Created[]; updated: readonly Updated[] }): void {
    for (const { entity, rows } of change.created) {
      this.alongside.created.set(entity, [...(this.alongside.created.get(entity) ?? []), ...rows]);
      this.pendingLines += rows.length / 2;
    }
    this.alongside.updated.push(...change.updated);
    this.pendingLines += change.updated.length / 2;
  }

  /**
   * Numbers, books and writes the pending invoices, and what was to be written with them: the batch
   * calls it once its customers are billed.
   */
  async flush(): Promise<void> {
    const pending = this.pending;
    const alongside = {
      created: [...this.alongside.created].map(([entity, rows]) => ({ entity, rows })),
      updated: this.alongside.updated,
    };
    this.pending = [];
    this.pendingLines = 0;
    this.alongside = { created: new Map(), updated: [] };
    const { environmentId } = this.ctx;
    const tx = this.tx;
    // Rows of a customer whose invoices went out in an earlier write (a full one): on their own.
    if (pending.length === 0) {
      if (alongside.created.length + alongside.updated.length > 0)
        await writeChange(tx, environmentId, alongside);
      return;
    }
    // Read before the numbers are taken, as booking does.
    const seller = await currentSeller(tx, environmentId);
    // Booking creates the balances it locks, at zero, before the numbers: for the customers that had
    // none when the batch read them. One made meanwhile by another transaction may hold money: then
    // booking is not plain after all, and the batch is billed again invoice by invoice.
    const balances = new CreditBalanceService(this.ctx);
    const missing = pending
      .map(({ invoice }) => ({ customerId: invoice.customerId, currency: invoice.currency }))
      .filter(({ customerId, currency }) => !this.balances.has(balanceKey(customerId, currency)));
    if (missing.length > 0) {
      await balances.createMissing(tx, missing);
      const created = await balances.lockAmounts(
        tx,
        missing.map(({ customerId }) => customerId),
      );
      for (const { customerId, currency } of missing) {
        const key = balanceKey(customerId, currency);
        if ((created.get(key) ?? 0) !== 0) throw new SetBasedBookingRefused(`the balance ${key} moved`);
        this.balances.set(key, 0);
      }
    }
    const handles = new Map<Pending, string>();
    for (const date of new Set(pending.map(({ invoice }) => invoice.date))) {
      const dated = pending.filter(({ invoice }) => invoice.date === date);
      const block = await takeNextHandles(tx, environmentId, 'invoice', date, dated.length);
      for (const [index, entry] of dated.entries()) handles.set(entry, block[index] as string);
    }
    const firstEntry = await takeEntryNumbers(tx, environmentId, pending.length);
    const changedOnCreate: { entity: typeof InvoiceSchema; key: Invoice; fields: string[] }[] = [];
    const entries: ReturnType<typeof entryRows>[] = [];
    const events: EventInput[] = [];
    pending.forEach((entry, index) => {
      const { invoice, lines, customer, posting } = entry;
      const booked = bookedFields(handles.get(entry) as string, customer, seller);
      Object.assign(invoice, booked);
      changedOnCreate.push({ entity: InvoiceSchema, key: invoice, fields: Object.keys(booked) });
      entries.push(
        entryRows(
          environmentId,
          { kind: 'booking', date: invoice.date, invoice },
          firstEntry + index,
          posting,
        ),
      );
      events.push(
        entry.created,
        invoiceEvent('invoice.booked', {
          invoice,
          customer: booked.customerSnapshot,
          items: lines,
          settlements: [],
        }),
      );
    });
    try {
      await writeChange(tx, environmentId, {
        created: [
          { entity: InvoiceSchema, rows: pending.map(({ invoice }) => invoice) },
          { entity: InvoiceItemSchema, rows: pending.flatMap(({ lines }) => lines) },
          ...alongside.created,
        ],
        updated: alongside.updated,
        changedOnCreate,
        unaudited: [
          { entity: JournalEntrySchema, rows: entries.map(({ entry }) => entry) },
          { entity: JournalLineSchema, rows: entries.flatMap(({ lines }) => lines) },
        ],
        events,
      });
    } catch (error) {
      // A number used before (a prefix or pattern used again): which invoice's, the per-invoice path
      // tells, as it would have.
      if (isUniqueViolation(error)) throw new SetBasedBookingRefused((error as Error).message);
      throw error;
    }
  }
}
