import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { DomainError } from '../../errors.ts';
import { changeInvoiceWithBalance } from '../balance/balance.change.ts';
import { CreditBalanceService, excessOf } from '../balance/balance.service.ts';
import { postSettlements } from '../ledger/ledger-journal.service.ts';
import { settlementStatus } from './invoice.arithmetic.ts';
import { type Invoice, type Settlement, SettlementSchema } from './invoice.entity.ts';
import { recordInvoiceEvent } from './invoice.events.ts';
import type { SettlementInput } from './invoice.input.ts';
import { assertNotVoid } from './invoice-collection.ts';

/** Settlements of booked invoices: payments, refunds, and what booking a credit note settles. */
export class InvoiceSettlementService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  /**
   * Records a settlement of a booked invoice; its status and amount due follow, and what it pays
   * beyond the total goes to the customer's balance.
   */
  async settle(id: string, input: SettlementInput): Promise<{ invoice: Invoice; settlement: Settlement }> {
    return changeInvoiceWithBalance(this.ctx, id, async (tx, invoice, balance) => {
      if (invoice.status !== 'booked') {
        throw new DomainError('CONFLICT', 'only booked invoices can be settled; book the draft first');
      }
      const direction = invoice.totalInclVat < 0 ? -1 : 1;
      if (Math.sign(input.amount) !== direction) {
        throw DomainError.onField(
          'INVALID_INPUT',
          ['amount'],
          direction > 0
            ? 'must be more than 0'
            : 'must be less than 0: the invoice total is negative, so settling it pays money out',
        );
      }
      const excessBefore = excessOf(invoice);
      const settlement = this.addSettlement(tx, invoice, {
        date: input.date,
        amount: input.amount,
        reference: input.reference ?? null,
        note: input.note ?? null,
      });
      new CreditBalanceService(this.ctx).recordExcess(tx, balance, invoice, excessBefore);
      await postSettlements(this.ctx, tx, invoice);
      if (invoice.settlementStatus === 'settled' || invoice.settlementStatus === 'over_settled') {
        await tx.flush();
        await recordInvoiceEvent(tx, 'invoice.settled', invoice);
      }
      return { invoice, settlement };
    });
  }

  /** Adds a settlement to an invoice the caller holds locked in `tx`. */
  addSettlement(
    tx: EntityManager,
    invoice: Invoice,
    fields: Pick<Settlement, 'date' | 'amount' | 'reference' | 'note'>,
  ): Settlement {
    assertNotVoid(invoice);
    const settledAmount = invoice.settledAmount + fields.amount;
    if (!Number.isSafeInteger(settledAmount)) {
      throw DomainError.onField(
        'INVALID_INPUT',
        ['amount'],
        'the settled sum would exceed the largest supported amount',
      );
    }
    const settlement = tx.create(SettlementSchema, {
      environmentId: this.ctx.environmentId,
      invoiceId: invoice.id,
      ...fields,
    });
    invoice.settledAmount = settledAmount;
    invoice.settlementStatus = settlementStatus(invoice.totalInclVat, settledAmount);
    invoice.updatedAt = new Date();
    return settlement;
  }
}
