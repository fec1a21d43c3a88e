import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { today } from '../../dates/calendar.ts';
import { DomainError, type FieldIssue } from '../../errors.ts';
import { settlementStatus } from './invoice.arithmetic.ts';
import {
  forgetInvoices,
  ITEM_FIELDS,
  type ItemFields,
  invoiceTransaction,
  lockInvoice,
  totalsOf,
} from './invoice.change.ts';
import { type Invoice, type InvoiceItem, InvoiceItemSchema, InvoiceSchema } from './invoice.entity.ts';
import type { CreditNoteCreateInput } from './invoice.input.ts';
import { InvoiceSettlementService } from './invoice-settlement.service.ts';

/** Credit notes: drafted from the lines of a booked invoice, applied to it when booked. */
export class CreditNoteService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  /**
   * A draft credit note for some or all lines of a booked invoice, each line credited in full and
   * at most once (drafts included: deleting a draft credit note frees its lines).
   */
  async create(invoiceId: string, input: CreditNoteCreateInput): Promise<Invoice> {
    const { environmentId } = this.ctx;
    const creditNote = await invoiceTransaction(this.ctx, async (tx) => {
      const original = await lockInvoice(this.ctx, tx, invoiceId);
      if (original.type === 'credit_note') {
        throw new DomainError('CONFLICT', 'a credit note cannot itself be credited');
      }
      if (original.status !== 'booked') {
        throw new DomainError('CONFLICT', 'only booked invoices can be credited');
      }
      const lines = await tx.find(
        InvoiceItemSchema,
        { invoiceId, environmentId },
        { orderBy: { id: 'asc' } },
      );
      const credits = await tx.find(InvoiceItemSchema, {
        environmentId,
        creditedItemId: { $in: lines.map((line) => line.id) },
      });
      const credited = new Set(credits.map((credit) => credit.creditedItemId));
      const selected = input.itemIds
        ? selectLines(lines, credited, input.itemIds)
        : lines.filter((line) => !credited.has(line.id));
      if (selected.length === 0) {
        throw new DomainError('CONFLICT', 'every line of this invoice has already been credited');
      }
      const totals = totalsOf(selected, ['itemIds']);
      const note = tx.create(InvoiceSchema, {
        environmentId,
        type: 'credit_note',
        status: 'draft',
        handle: null,
        customerId: original.customerId,
        customerSnapshot: null,
        creditedInvoiceId: original.id,
        currency: original.currency,
        date: input.date ?? today(),
        dueDate: null,
        memo: input.memo ?? null,
        ...totals,
        taxRounding: original.taxRounding,
        taxExempt: original.taxExempt,
        settledAmount: 0,
        settlementStatus: settlementStatus(totals.totalInclVat, 0),
      });
      for (const line of selected) {
        const copy = Object.fromEntries(ITEM_FIELDS.map((field) => [field, line[field]])) as ItemFields;
        tx.create(InvoiceItemSchema, { environmentId, invoiceId: note.id, creditedItemId: line.id, ...copy });
      }
      return note;
    });
    forgetInvoices(this.ctx);
    return creditNote;
  }

  /** Booking a credit note settles its total on the credited invoice, and the credit note by it. */
  async apply(tx: EntityManager, creditNote: Invoice, creditedInvoiceId: string): Promise<void> {
    const original = await lockInvoice(this.ctx, tx, creditedInvoiceId);
    const amount = creditNote.totalInclVat;
    if (amount === 0) return;
    const settlements = new InvoiceSettlementService(this.ctx);
    settlements.addSettlement(tx, original, {
      date: creditNote.date,
      amount,
      reference: creditNote.handle,
      note: 'Credit note',
    });
    settlements.addSettlement(tx, creditNote, {
      date: creditNote.date,
      amount,
      reference: original.handle,
      note: 'Applied to the credited invoice',
    });
    forgetInvoices(this.ctx);
  }
}

function selectLines(
  lines: InvoiceItem[],
  credited: Set<string | null | undefined>,
  itemIds: string[],
): InvoiceItem[] {
  const byId = new Map(lines.map((line) => [line.id, line]));
  const unknown: FieldIssue[] = [];
  const taken: FieldIssue[] = [];
  itemIds.forEach((id, index) => {
    if (!byId.has(id)) unknown.push({ path: ['itemIds', index], message: 'is not a line of this invoice' });
    else if (credited.has(id))
      taken.push({ path: ['itemIds', index], message: 'this line has already been credited' });
  });
  if (unknown.length > 0) {
    throw new DomainError('INVALID_REFERENCE', 'The request names lines the invoice does not have', unknown);
  }
  if (taken.length > 0) {
    throw new DomainError('CONFLICT', 'The request names lines that have already been credited', taken);
  }
  return lines.filter((line) => itemIds.includes(line.id));
}
