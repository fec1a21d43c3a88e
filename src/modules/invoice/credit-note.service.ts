import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { today } from '../../dates/calendar.ts';
import { leanFind } from '../../db/lean.ts';
import { DomainError, type FieldIssue } from '../../errors.ts';
import { customerNow } from '../clock/clock.now.ts';
import { TaxCodeSchema } from '../tax/tax-code.entity.ts';
import type { CreditNoteInput } from './credit-note.input.ts';
import { type Creditable, creditLines } from './credit-note.lines.ts';
import { settlementStatus } from './invoice.arithmetic.ts';
import { forgetInvoices, invoiceTransaction, lockInvoice, totalsOf } from './invoice.change.ts';
import { type Invoice, InvoiceItemSchema, InvoiceSchema } from './invoice.entity.ts';
import { assertNotVoid } from './invoice-collection.ts';

/** Credit notes: drafted from the lines of a booked invoice (in full or in part) and free lines. */
export class CreditNoteService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  /**
   * A draft credit note for a booked invoice. No line is credited beyond its amount: what draft and
   * booked credit notes took counts (deleting a draft credit note frees what it took).
   */
  async create(invoiceId: string, input: CreditNoteInput): Promise<Invoice> {
    const { environmentId } = this.ctx;
    const creditNote = await invoiceTransaction(this.ctx, async (tx) => {
      const original = await lockInvoice(this.ctx, tx, invoiceId);
      if (original.type === 'credit_note') {
        throw new DomainError('CONFLICT', 'a credit note cannot itself be credited');
      }
      if (original.status !== 'booked') {
        throw new DomainError('CONFLICT', 'only booked invoices can be credited');
      }
      assertNotVoid(original);
      const creditable = await this.creditable(tx, invoiceId);
      const lines = creditLines(creditable, input, await this.freeLineTaxRates(tx, input));
      if (lines.length === 0) {
        throw new DomainError('CONFLICT', 'every line of this invoice has already been credited');
      }
      const totals = totalsOf(
        lines.map((line) => line.fields),
        input.lines || input.freeLines ? ['lines'] : ['itemIds'],
      );
      if (input.freeLines) await this.assertWithinInvoice(tx, original, totals.totalInclVat);
      const note = tx.create(InvoiceSchema, {
        environmentId,
        type: 'credit_note',
        status: 'draft',
        handle: null,
        customerId: original.customerId,
        customerSnapshot: null,
        sellerSnapshot: null,
        creditedInvoiceId: original.id,
        creditReason: input.reason ?? 'other',
        creditOutcome: input.outcome ?? 'settle_invoice',
        currency: original.currency,
        date: input.date ?? today(await customerNow(tx, environmentId, original.customerId)),
        dueDate: null,
        memo: input.memo ?? null,
        ...totals,
        taxRounding: original.taxRounding,
        taxExempt: original.taxExempt,
        settledAmount: 0,
        settlementStatus: settlementStatus(totals.totalInclVat, 0),
      });
      for (const line of lines) {
        tx.create(InvoiceItemSchema, {
          environmentId,
          invoiceId: note.id,
          creditedItemId: line.creditedItemId,
          ...line.fields,
        });
      }
      return note;
    });
    forgetInvoices(this.ctx);
    return creditNote;
  }

  /** The invoice's lines with what credit notes have not taken of each yet. */
  private async creditable(tx: EntityManager, invoiceId: string): Promise<Creditable[]> {
    const { environmentId } = this.ctx;
    const lines = await tx.find(InvoiceItemSchema, { invoiceId, environmentId }, { orderBy: { id: 'asc' } });
    const credits = await tx.find(InvoiceItemSchema, {
      environmentId,
      creditedItemId: { $in: lines.map((line) => line.id) },
    });
    const taken = new Map<string, number>();
    for (const credit of credits) {
      const id = credit.creditedItemId as string;
      taken.set(id, (taken.get(id) ?? 0) + credit.amount);
    }
    return lines.map((line) => ({ line, left: line.amount - (taken.get(line.id) ?? 0) }));
  }

  private async freeLineTaxRates(tx: EntityManager, input: CreditNoteInput): Promise<Map<string, string>> {
    const wanted = (input.freeLines ?? []).flatMap((line) => (line.taxCode ? [line.taxCode] : []));
    if (wanted.length === 0) return new Map();
    const codes = await leanFind(tx, TaxCodeSchema, {
      environmentId: this.ctx.environmentId,
      code: [...new Set(wanted)],
    });
    const rates = new Map(codes.map((code) => [code.code, code.rate]));
    const unknown: FieldIssue[] = [];
    (input.freeLines ?? []).forEach((line, index) => {
      if (line.taxCode && !rates.has(line.taxCode)) {
        unknown.push({
          path: ['freeLines', index, 'taxCode'],
          message: 'is not a tax code of this environment',
        });
      }
    });
    if (unknown.length > 0)
      throw new DomainError('INVALID_REFERENCE', 'The request names unknown tax codes', unknown);
    return rates;
  }

  /** Free lines credit no line in particular, so the invoice's total bounds all its credit notes. */
  private async assertWithinInvoice(tx: EntityManager, original: Invoice, total: number): Promise<void> {
    const [row] = await tx.execute<{ credited: string }[]>(
      `select coalesce(sum(total_incl_vat), 0) as credited from invoice
       where environment_id = ? and credited_invoice_id = ?`,
      [this.ctx.environmentId, original.id],
    );
    const left = original.totalInclVat - Number(row?.credited ?? 0);
    if (total > left) {
      throw DomainError.onField(
        'CONFLICT',
        ['freeLines'],
        `the credit note's total (${total}) is more than is left to credit of the invoice (${left})`,
      );
    }
  }
}
