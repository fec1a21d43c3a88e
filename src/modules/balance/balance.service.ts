import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { newId } from '../../db/ids.ts';
import { DomainError } from '../../errors.ts';
import { type Invoice, InvoiceSchema } from '../invoice/invoice.entity.ts';
import { InvoiceSettlementService } from '../invoice/invoice-settlement.service.ts';
import {
  BalanceTransactionSchema,
  type BalanceTransactionType,
  type CustomerBalance,
  CustomerBalanceSchema,
} from './balance.entity.ts';

/** The key of a customer's balance in a currency. */
export const balanceKey = (customerId: string, currency: string) => `${customerId}:${currency}`;

/** The settlement reference that names the balance, on both sides of a transfer. */
export const BALANCE_REFERENCE = 'customer balance';

/**
 * What an invoice holds beyond its total: the part of an over-payment the balance carries until it is
 * used. Only invoices have it; for a negative total every settlement pays out, so nothing is excess.
 */
export function excessOf(invoice: Pick<Invoice, 'type' | 'totalInclVat' | 'settledAmount'>): number {
  if (invoice.type !== 'invoice') return 0;
  return Math.max(0, invoice.settledAmount - Math.max(invoice.totalInclVat, 0));
}

type Movement = { type: BalanceTransactionType; invoiceId?: string | null; refundId?: string | null };

/**
 * Customer credit balances (DESIGN §12). Every change happens under the lock of the balance row that
 * `lock` takes, and that lock is taken before any invoice of the customer in that currency: one order
 * for every writer, so concurrent bookings, settlements and refunds queue instead of deadlocking.
 */
export class CreditBalanceService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  /** The balance of a customer in a currency, created at zero when missing, locked for the rest of `tx`. */
  async lock(tx: EntityManager, customerId: string, currency: string): Promise<CustomerBalance> {
    const { environmentId } = this.ctx;
    await this.createMissing(tx, [{ customerId, currency }]);
    return tx.findOneOrFail(
      CustomerBalanceSchema,
      { environmentId, customerId, currency },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
  }

  /** Creates at zero the balances of `pairs` that do not exist yet (as `lock` does, for many at once). */
  async createMissing(
    tx: EntityManager,
    pairs: readonly { customerId: string; currency: string }[],
  ): Promise<void> {
    if (pairs.length === 0) return;
    await tx.execute(
      `insert into customer_balance (id, environment_id, customer_id, currency, amount, created_at)
       values ${pairs.map(() => '(?, ?, ?, ?, 0, now())').join(', ')}
       on conflict (environment_id, customer_id, currency) do nothing`,
      pairs.flatMap(({ customerId, currency }) => [newId(), this.ctx.environmentId, customerId, currency]),
    );
  }

  /**
   * The amounts of the customers' balances (keyed by balanceKey; a missing one holds nothing), locked
   * for the rest of `tx`: a billing batch's one read of them, taken before any invoice of theirs, the
   * order `lock` keeps.
   */
  async lockAmounts(tx: EntityManager, customerIds: readonly string[]): Promise<Map<string, number>> {
    const amounts = new Map<string, number>();
    if (customerIds.length === 0) return amounts;
    const rows = await tx.execute<{ customer_id: string; currency: string; amount: string }[]>(
      `select customer_id, currency, amount from customer_balance
       where environment_id = ? and customer_id in (${customerIds.map(() => '?').join(', ')})
       order by id for update`,
      [this.ctx.environmentId, ...customerIds],
    );
    for (const row of rows) amounts.set(balanceKey(row.customer_id, row.currency), Number(row.amount));
    return amounts;
  }

  /** Adds a movement of `amount` (signed) to the locked balance. */
  move(tx: EntityManager, balance: CustomerBalance, amount: number, movement: Movement): void {
    const next = balance.amount + amount;
    if (next < 0) {
      throw new DomainError(
        'CONFLICT',
        `the customer's ${balance.currency} balance is ${balance.amount}; it cannot give ${-amount}`,
      );
    }
    if (!Number.isSafeInteger(next)) {
      throw new DomainError('CONFLICT', 'the balance would exceed the largest supported amount');
    }
    tx.create(BalanceTransactionSchema, {
      environmentId: this.ctx.environmentId,
      customerId: balance.customerId,
      currency: balance.currency,
      type: movement.type,
      amount,
      invoiceId: movement.invoiceId ?? null,
      refundId: movement.refundId ?? null,
    });
    balance.amount = next;
    balance.updatedAt = new Date();
  }

  /** Puts on the balance what a settlement just added to the invoice's excess (an over-payment). */
  recordExcess(tx: EntityManager, balance: CustomerBalance, invoice: Invoice, excessBefore: number): void {
    const added = excessOf(invoice) - excessBefore;
    if (added > 0) this.move(tx, balance, added, { type: 'overpayment', invoiceId: invoice.id });
  }

  /**
   * Booking an invoice uses what the balance holds, up to the amount due: a settlement on the invoice
   * naming the balance, taken first from over-settled invoices (oldest first) and then from credit.
   */
  async applyTo(tx: EntityManager, balance: CustomerBalance, invoice: Invoice): Promise<void> {
    const due = invoice.totalInclVat - invoice.settledAmount;
    const amount = Math.min(balance.amount, due);
    if (invoice.type !== 'invoice' || amount <= 0) return;
    await this.draw(
      tx,
      balance,
      amount,
      { type: 'applied', invoiceId: invoice.id },
      {
        date: invoice.date,
        note: `Moved to ${invoice.handle} from the credit balance`,
      },
    );
    new InvoiceSettlementService(this.ctx).addSettlement(tx, invoice, {
      date: invoice.date,
      amount,
      reference: BALANCE_REFERENCE,
      note: 'Credit balance applied',
    });
  }

  /**
   * A credit-only invoice (a billing run's or a change's proration credits, nothing due): its credit goes
   * on the balance, for the next invoice to use, and a settlement naming the balance closes it, as Stripe
   * does with a negative invoice total.
   */
  creditFrom(tx: EntityManager, balance: CustomerBalance, invoice: Invoice): void {
    const amount = invoice.totalInclVat - invoice.settledAmount;
    if (invoice.type !== 'invoice' || amount >= 0) return;
    this.move(tx, balance, -amount, { type: 'invoice_credit', invoiceId: invoice.id });
    new InvoiceSettlementService(this.ctx).addSettlement(tx, invoice, {
      date: invoice.date,
      amount,
      reference: BALANCE_REFERENCE,
      note: 'Credited to the customer balance',
    });
  }

  /**
   * Takes `amount` off the locked balance. The part that over-payments left on invoices moves off them
   * (a negative settlement on each, oldest first), so that an invoice's `totalDue` stops counting money
   * the balance has given away.
   */
  async draw(
    tx: EntityManager,
    balance: CustomerBalance,
    amount: number,
    movement: Movement,
    transfer: { date: string; note: string },
  ): Promise<void> {
    this.move(tx, balance, -amount, movement);
    let left = amount;
    const settlements = new InvoiceSettlementService(this.ctx);
    for (const source of await this.overSettled(tx, balance, movement.invoiceId ?? null)) {
      if (left === 0) break;
      const taken = Math.min(left, excessOf(source));
      if (taken === 0) continue;
      settlements.addSettlement(tx, source, {
        date: transfer.date,
        amount: -taken,
        reference: BALANCE_REFERENCE,
        note: transfer.note,
      });
      left -= taken;
    }
  }

  /** The customer's over-settled invoices in the balance's currency, oldest first, locked. */
  private async overSettled(
    tx: EntityManager,
    balance: CustomerBalance,
    exceptId: string | null,
  ): Promise<Invoice[]> {
    const rows = await tx.execute<{ id: string }[]>(
      `select id from invoice
       where environment_id = ? and customer_id = ? and currency = ? and type = 'invoice'
         and status = 'booked' and settled_amount > greatest(total_incl_vat, 0)`,
      [this.ctx.environmentId, balance.customerId, balance.currency],
    );
    const ids = rows.map((row) => row.id).filter((id) => id !== exceptId);
    if (ids.length === 0) return [];
    return tx.find(
      InvoiceSchema,
      { environmentId: this.ctx.environmentId, id: { $in: ids } },
      { lockMode: LockMode.PESSIMISTIC_WRITE, orderBy: { date: 'asc', id: 'asc' } },
    );
  }
}
