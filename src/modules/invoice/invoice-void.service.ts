import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { today } from '../../dates/calendar.ts';
import { DomainError } from '../../errors.ts';
import { BALANCE_REFERENCE, excessOf } from '../balance/balance.service.ts';
import { postSettlements, postVoid } from '../ledger/ledger-journal.service.ts';
import { changeInvoice, forgetInvoices, invoiceTransaction, lockInvoice } from './invoice.change.ts';
import { type Invoice, InvoiceSchema, type Settlement, SettlementSchema } from './invoice.entity.ts';
import { recordInvoiceEvent } from './invoice.events.ts';
import { amountDue } from './invoice-collection.ts';
import { InvoiceSettlementService } from './invoice-settlement.service.ts';

/**
 * Void, write-off and settlement reversal: what may happen to a booked invoice's money after
 * booking. Each runs on the locked invoice row, so a void and a settlement of one invoice are
 * serialized and a void invoice never ends up with a live settlement.
 */
export class InvoiceVoidService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  /** Cancels a booked invoice on which nothing is settled; it keeps its number and owes nothing. */
  async void(id: string): Promise<Invoice> {
    return changeInvoice(this.ctx, id, async (tx, invoice) => {
      assertBookedInvoice(invoice, 'voided');
      if (invoice.voidedAt) throw new DomainError('CONFLICT', `${invoice.handle} is already void`);
      // A booked credit note, when there is one, is the reason to name ('booked' sorts before 'draft').
      const creditNote = await tx.findOne(
        InvoiceSchema,
        { environmentId: this.ctx.environmentId, creditedInvoiceId: invoice.id },
        { orderBy: { status: 'asc' } },
      );
      if (creditNote) {
        throw new DomainError(
          'CONFLICT',
          creditNote.status === 'booked'
            ? `credit note ${creditNote.handle} has been issued against ${invoice.handle}; it can no longer be voided`
            : `a draft credit note credits ${invoice.handle}; delete it before voiding the invoice`,
        );
      }
      if (await this.hasLiveSettlements(tx, invoice)) {
        throw new DomainError(
          'CONFLICT',
          `${invoice.handle} has settlements; reverse them (settlementReverse) before voiding it`,
        );
      }
      invoice.voidedAt = new Date();
      invoice.updatedAt = invoice.voidedAt;
      await tx.flush();
      await postVoid(this.ctx, tx, invoice);
      await recordInvoiceEvent(tx, 'invoice.voided', invoice);
      return invoice;
    });
  }

  /** Writes off a booked invoice that still has something due; a later payment is still accepted. */
  async markUncollectible(id: string): Promise<Invoice> {
    return changeInvoice(this.ctx, id, async (tx, invoice) => {
      assertBookedInvoice(invoice, 'marked uncollectible');
      if (invoice.voidedAt) throw new DomainError('CONFLICT', `${invoice.handle} is void`);
      if (invoice.uncollectibleAt) {
        throw new DomainError('CONFLICT', `${invoice.handle} is already marked uncollectible`);
      }
      if (amountDue(invoice) <= 0) {
        throw new DomainError('CONFLICT', `${invoice.handle} is fully settled; nothing is left to write off`);
      }
      invoice.uncollectibleAt = new Date();
      invoice.updatedAt = invoice.uncollectibleAt;
      await tx.flush();
      await recordInvoiceEvent(tx, 'invoice.marked_uncollectible', invoice);
      return invoice;
    });
  }

  /**
   * Cancels a settlement booked by mistake with a new, negative one that names it (money moves are
   * append-only). A settlement is reversed at most once; a reversal is not itself reversed.
   */
  async reverseSettlement(
    settlementId: string,
    reason: string | null,
  ): Promise<{ invoice: Invoice; settlement: Settlement }> {
    const { environmentId } = this.ctx;
    if (reason !== null && reason.length > 1000) {
      throw DomainError.onField('INVALID_INPUT', ['reason'], 'must be at most 1000 characters');
    }
    try {
      const result = await invoiceTransaction(this.ctx, async (tx) => {
        const found = await tx.findOne(SettlementSchema, { id: settlementId, environmentId });
        if (!found) throw DomainError.notFound('Settlement', settlementId);
        const invoice = await lockInvoice(this.ctx, tx, found.invoiceId);
        if (found.reversesSettlementId) {
          throw new DomainError('CONFLICT', 'this settlement is itself a reversal and cannot be reversed');
        }
        if (await tx.count(SettlementSchema, { environmentId, reversesSettlementId: found.id })) {
          throw new DomainError('CONFLICT', 'this settlement has already been reversed');
        }
        if (invoice.type === 'credit_note') {
          throw new DomainError(
            'CONFLICT',
            'the settlements of a credit note come from booking it and cannot be reversed on their own',
          );
        }
        if (found.reference === BALANCE_REFERENCE) {
          throw new DomainError(
            'CONFLICT',
            'this settlement moved money to or from the customer balance and cannot be reversed on its own',
          );
        }
        // An over-payment's excess went to the customer balance, which may have spent it since.
        const after = { ...invoice, settledAmount: invoice.settledAmount - found.amount };
        if (excessOf(after) < excessOf(invoice)) {
          throw new DomainError(
            'CONFLICT',
            `part of this settlement over-paid ${invoice.handle} and went to the customer balance; it cannot be reversed`,
          );
        }
        if (found.reference && (await this.isCreditNoteSettlement(tx, invoice, found.reference))) {
          throw new DomainError(
            'CONFLICT',
            `this settlement is what credit note ${found.reference} settled; it cannot be reversed on its own`,
          );
        }
        const settlement = new InvoiceSettlementService(this.ctx).addSettlement(tx, invoice, {
          date: today(),
          amount: -found.amount,
          reference: found.reference,
          note: reason,
        });
        settlement.reversesSettlementId = found.id;
        await tx.flush();
        await postSettlements(this.ctx, tx, invoice);
        return { invoice, settlement };
      });
      return result;
    } catch (error) {
      // Two reversals of one settlement racing: the unique index lets only the first commit.
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
      throw new DomainError('CONFLICT', 'this settlement has already been reversed');
    } finally {
      forgetInvoices(this.ctx);
    }
  }

  /** Settlements that are neither reversals nor reversed: money still standing on the invoice. */
  private async hasLiveSettlements(tx: EntityManager, invoice: Invoice): Promise<boolean> {
    const settlements = await tx.find(SettlementSchema, {
      environmentId: this.ctx.environmentId,
      invoiceId: invoice.id,
    });
    const reversed = new Set(settlements.map((settlement) => settlement.reversesSettlementId));
    return settlements.some(
      (settlement) => settlement.reversesSettlementId === null && !reversed.has(settlement.id),
    );
  }

  private async isCreditNoteSettlement(tx: EntityManager, invoice: Invoice, reference: string) {
    const creditNote = await tx.count(InvoiceSchema, {
      environmentId: this.ctx.environmentId,
      creditedInvoiceId: invoice.id,
      handle: reference,
      status: 'booked',
    });
    return creditNote > 0;
  }
}

function assertBookedInvoice(invoice: Invoice, what: string): void {
  if (invoice.type === 'credit_note') {
    throw new DomainError('CONFLICT', `a credit note cannot be ${what}`);
  }
  if (invoice.status !== 'booked') {
    throw new DomainError('CONFLICT', `a draft cannot be ${what}; delete the draft instead`);
  }
}
