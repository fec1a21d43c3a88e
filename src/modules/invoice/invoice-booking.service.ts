import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { ServiceContext } from '../../context.ts';
import { cachedRead, customerReadKey } from '../../db/read-cache.ts';
import { DomainError } from '../../errors.ts';
import { changeInvoiceWithBalance } from '../balance/balance.change.ts';
import { CreditBalanceService } from '../balance/balance.service.ts';
import { type Customer, CustomerSchema } from '../customer/customer.entity.ts';
import { postInvoiceBooking } from '../ledger/ledger-journal.service.ts';
import type { InvoiceSeller } from '../seller/seller.entity.ts';
import { currentSeller } from '../seller/seller.service.ts';
import { CreditNoteBookingService } from './credit-note-booking.service.ts';
import { assertDraft, customerSnapshot } from './invoice.change.ts';
import { type Invoice, InvoiceItemSchema } from './invoice.entity.ts';
import { recordInvoiceEvent } from './invoice.events.ts';
import { takeNextHandle } from './invoice-numbering.service.ts';
import { retaxForBooking } from './invoice-tax.service.ts';

/**
 * What booking sets on a draft: its number, the customer and seller frozen onto it, the moment. A billing
 * batch's set-based booking sets the same (and its audit rows name these fields).
 */
export function bookedFields(handle: string, customer: Customer, seller: InvoiceSeller) {
  const bookedAt = new Date();
  return {
    handle,
    status: 'booked' as const,
    customerSnapshot: customerSnapshot(customer),
    sellerSnapshot: seller,
    bookedAt,
    updatedAt: bookedAt,
  } satisfies Partial<Invoice>;
}

/** Booking drafts: the step that numbers an invoice or credit note and makes it final. */
export class InvoiceBookingService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  /**
   * Books a draft: takes the next gapless number of its type, freezes the customer onto it and,
   * for a credit note, does what its outcome says with its total; an invoice uses the customer's
   * credit balance in its currency; with `creditToBalance` (invoices of billing runs and proration), a
   * negative total goes on that balance instead. All in one transaction.
   */
  async book(id: string, options: { creditToBalance?: boolean } = {}): Promise<Invoice> {
    try {
      return await changeInvoiceWithBalance(this.ctx, id, async (tx, invoice, balance) => {
        assertDraft(invoice);
        const { environmentId } = this.ctx;
        if ((await tx.count(InvoiceItemSchema, { invoiceId: id, environmentId })) === 0) {
          throw new DomainError('CONFLICT', 'an invoice needs at least one item to be booked');
        }
        // A credit note keeps the amounts of the lines it credits.
        if (invoice.type === 'invoice') await retaxForBooking(this.ctx, tx, invoice);
        const customer = await cachedRead(customerReadKey(environmentId, invoice.customerId), () =>
          tx.findOneOrFail(CustomerSchema, { id: invoice.customerId, environmentId }),
        );
        // Read before the number is taken: the counter row stays locked until the transaction ends.
        const seller = await currentSeller(tx, environmentId);
        const handle = await takeNextHandle(tx, environmentId, invoice.type, invoice.date);
        Object.assign(invoice, bookedFields(handle, customer, seller));
        if (invoice.creditedInvoiceId) {
          await new CreditNoteBookingService(this.ctx).apply(tx, invoice, balance);
        } else {
          const balances = new CreditBalanceService(this.ctx);
          await balances.applyTo(tx, balance, invoice);
          if (options.creditToBalance) balances.creditFrom(tx, balance, invoice);
        }
        await tx.flush();
        await postInvoiceBooking(this.ctx, tx, invoice);
        await recordInvoiceEvent(
          tx,
          invoice.type === 'credit_note' ? 'credit_note.booked' : 'invoice.booked',
          invoice,
        );
        return invoice;
      });
    } catch (error) {
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
      throw new DomainError(
        'CONFLICT',
        'the next number is already used by another invoice of this environment (its prefix or pattern was used before); choose another',
      );
    }
  }
}
