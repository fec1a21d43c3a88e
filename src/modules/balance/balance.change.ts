import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { DomainError } from '../../errors.ts';
import { forgetInvoices, invoiceTransaction, lockInvoice } from '../invoice/invoice.change.ts';
import type { Invoice } from '../invoice/invoice.entity.ts';
import type { CustomerBalance } from './balance.entity.ts';
import { balanceLoaders } from './balance.reads.ts';
import { CreditBalanceService } from './balance.service.ts';

/**
 * `changeInvoice` for changes that may move the customer's balance: locks the balance of the
 * invoice's customer and currency first, then the invoice (the lock order CreditBalanceService keeps).
 */
export async function changeInvoiceWithBalance<T>(
  ctx: ServiceContext,
  id: string,
  change: (tx: EntityManager, invoice: Invoice, balance: CustomerBalance) => Promise<T>,
): Promise<T> {
  const result = await invoiceTransaction(ctx, async (tx) => {
    // A plain read, not an entity: the locked read below must be the one the identity map holds.
    const [seen] = await tx.execute<{ customer_id: string; currency: string }[]>(
      'select customer_id, currency from invoice where id = ? and environment_id = ?',
      [id, ctx.environmentId],
    );
    if (!seen) throw DomainError.notFound('Invoice', id);
    const balance = await new CreditBalanceService(ctx).lock(tx, seen.customer_id, seen.currency);
    const invoice = await lockInvoice(ctx, tx, id);
    if (invoice.currency !== seen.currency) {
      throw new DomainError('CONFLICT', 'the invoice changed currency meanwhile; try again');
    }
    return change(tx, invoice, balance);
  });
  forgetInvoices(ctx);
  ctx.loaders.forget(balanceLoaders);
  return result;
}
