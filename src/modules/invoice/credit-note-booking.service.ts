import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { DomainError } from '../../errors.ts';
import type { CustomerBalance } from '../balance/balance.entity.ts';
import { RefundSchema } from '../balance/balance.entity.ts';
import { BALANCE_REFERENCE, CreditBalanceService, excessOf } from '../balance/balance.service.ts';
import { lockInvoice } from './invoice.change.ts';
import type { Invoice } from './invoice.entity.ts';
import { InvoiceSettlementService } from './invoice-settlement.service.ts';

/**
 * What booking a credit note does with its total, by its outcome. Each settles the credit note by
 * its total, and names where the total went: the credited invoice, the balance, or a refund.
 */
export class CreditNoteBookingService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  /** Runs in the booking transaction, which holds the customer's balance and the credit note locked. */
  async apply(tx: EntityManager, creditNote: Invoice, balance: CustomerBalance): Promise<void> {
    const original = await lockInvoice(this.ctx, tx, creditNote.creditedInvoiceId as string);
    const amount = creditNote.totalInclVat;
    if (amount === 0) return;
    const outcome = creditNote.creditOutcome ?? 'settle_invoice';
    if (outcome !== 'settle_invoice' && amount < 0) {
      throw new DomainError('CONFLICT', `a credit note with a negative total can only settle the invoice`);
    }
    const settlements = new InvoiceSettlementService(this.ctx);
    const balances = new CreditBalanceService(this.ctx);
    const settleNote = (reference: string | null, note: string) =>
      settlements.addSettlement(tx, creditNote, { date: creditNote.date, amount, reference, note });
    if (outcome === 'settle_invoice') {
      const excessBefore = excessOf(original);
      settlements.addSettlement(tx, original, {
        date: creditNote.date,
        amount,
        reference: creditNote.handle ?? null,
        note: 'Credit note',
      });
      balances.recordExcess(tx, balance, original, excessBefore);
      settleNote(original.handle ?? null, 'Applied to the credited invoice');
    } else if (outcome === 'credit_balance') {
      balances.move(tx, balance, amount, { type: 'credit_note', invoiceId: creditNote.id });
      settleNote(BALANCE_REFERENCE, 'Credited to the customer balance');
    } else {
      await this.assertRefundable(tx, original, amount);
      tx.create(RefundSchema, {
        environmentId: this.ctx.environmentId,
        customerId: creditNote.customerId,
        currency: creditNote.currency,
        amount,
        creditNoteId: creditNote.id,
        date: creditNote.date,
        reference: creditNote.handle ?? null,
        note: `Refund for ${original.handle}`,
      });
      settleNote(creditNote.handle ?? null, 'Refunded to the customer');
    }
  }

  /**
   * A refund pays back money the customer paid for the credited invoice: its settlements, less what
   * credit notes settled on it and what earlier credit notes refunded.
   */
  private async assertRefundable(tx: EntityManager, original: Invoice, amount: number): Promise<void> {
    const { environmentId } = this.ctx;
    const [row] = await tx.execute<{ credited: string; refunded: string }[]>(
      `select
         (select coalesce(sum(total_incl_vat), 0) from invoice
          where environment_id = ? and credited_invoice_id = ? and status = 'booked'
            and credit_outcome = 'settle_invoice') as credited,
         (select coalesce(sum(r.amount), 0) from refund r join invoice n on n.id = r.credit_note_id
          where r.environment_id = ? and n.credited_invoice_id = ?) as refunded`,
      [environmentId, original.id, environmentId, original.id],
    );
    const paid = original.settledAmount - Number(row?.credited ?? 0) - Number(row?.refunded ?? 0);
    if (amount > paid) {
      throw new DomainError(
        'CONFLICT',
        `a refund can only pay back what was paid: ${paid} of ${original.handle} is refundable, the credit note is ${amount}`,
      );
    }
  }
}
