import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { batchFork, inBatchTransaction } from '../../db/tenant-transaction.ts';
import { DomainError, type FieldPath } from '../../errors.ts';
import type { Customer } from '../customer/customer.entity.ts';
import { InvoiceArithmeticError, invoiceTotals, type LineAmounts } from './invoice.arithmetic.ts';
import { type Invoice, type InvoiceCustomer, type InvoiceItem, InvoiceSchema } from './invoice.entity.ts';
import { invoiceLoaders } from './invoice.reads.ts';

/** The fields of an item that the service works out from a request, and that a credit note copies. */
export const ITEM_FIELDS = [
  'quantity',
  'unitAmount',
  'sku',
  'title',
  'description',
  'periodStart',
  'periodEnd',
  'taxCode',
  'taxRate',
  'taxBehavior',
  'discountPercentage',
  'discountAmount',
  'amount',
  'taxAmount',
] as const;
export type ItemFields = Pick<InvoiceItem, (typeof ITEM_FIELDS)[number]>;

export const customerSummary = (customer: Customer): InvoiceCustomer => ({
  id: customer.id,
  handle: customer.handle ?? null,
  name: customer.name,
  billingAddress: customer.billingAddress,
});

/** The customer as booking freezes it: the summary, plus the company and VAT ids the documents print. */
export const customerSnapshot = (customer: Customer): InvoiceCustomer => ({
  ...customerSummary(customer),
  companyName: customer.companyName ?? null,
  taxIds: customer.taxIds,
  email: customer.email ?? null,
});

/** The invoice totals of `items`, a refused figure reported at `path`. */
export function totalsOf(items: readonly LineAmounts[], path: FieldPath) {
  try {
    return invoiceTotals(items);
  } catch (error) {
    if (!(error instanceof InvoiceArithmeticError)) throw error;
    throw DomainError.onField('INVALID_INPUT', path, error.message);
  }
}

export function assertDraft(invoice: Invoice): void {
  if (invoice.status !== 'draft') {
    throw new DomainError(
      'CONFLICT',
      `${invoice.handle} is booked; a booked invoice can no longer be changed`,
    );
  }
}

/** Locks the invoice row for the rest of the transaction; another environment's id is not found. */
export async function lockInvoice(ctx: ServiceContext, tx: EntityManager, id: string): Promise<Invoice> {
  const invoice = await tx.findOne(
    InvoiceSchema,
    { id, environmentId: ctx.environmentId },
    { lockMode: LockMode.PESSIMISTIC_WRITE },
  );
  if (!invoice) throw DomainError.notFound('Invoice', id);
  return invoice;
}

/** Runs `run` on a fresh identity map in the batch transaction of `em` and flushes what it did. */
async function inBatchFork<T>(em: EntityManager, run: (tx: EntityManager) => Promise<T>): Promise<T> {
  const fork = batchFork(em);
  const result = await run(fork);
  await fork.flush();
  return result;
}

export function invoiceTransaction<T>(
  ctx: ServiceContext,
  run: (tx: EntityManager) => Promise<T>,
): Promise<T> {
  // In a billing run's batch, which is rolled back whole on any failure: the same fresh identity map,
  // on the batch's transaction, without a savepoint.
  if (inBatchTransaction(ctx.em)) return inBatchFork(ctx.em, run);
  // A fresh identity map: what the request loaded before must not stand in for the locked rows.
  return ctx.em.transactional((tx) => run(tx as EntityManager), { clear: true });
}

/** Drops what the request's loaders knew of invoices, once a transaction has changed one. */
export function forgetInvoices(ctx: ServiceContext): void {
  ctx.loaders.forget(invoiceLoaders);
}

/** Runs `change` on the locked invoice in a transaction, then drops what the loaders knew of it. */
export async function changeInvoice<T>(
  ctx: ServiceContext,
  id: string,
  change: (tx: EntityManager, invoice: Invoice) => Promise<T>,
): Promise<T> {
  const result = await invoiceTransaction(ctx, async (tx) => change(tx, await lockInvoice(ctx, tx, id)));
  forgetInvoices(ctx);
  return result;
}
