import type { ServiceContext } from '../../context.ts';
import { DomainError } from '../../errors.ts';
import { enqueueJob } from '../../jobs/enqueue.ts';
import { CustomerSchema } from '../customer/customer.entity.ts';
import { changeInvoice } from '../invoice/invoice.change.ts';
import type { Invoice } from '../invoice/invoice.entity.ts';
import { type InvoiceEmail, InvoiceEmailSchema } from './email.entity.ts';

export const INVOICE_EMAIL_TASK = 'invoice-email';

/** A copy of a document someone asked to send: its sequence is chosen when asked (see `requestSend`). */
export type InvoiceEmailRequest = { environmentId: string; invoiceId: string; sequence: number };

/**
 * Tries of an e-mail someone asked for before it stays failed, about half an hour of backoff (the
 * automatic ones retry for days).
 */
const REQUESTED_ATTEMPTS = 8;

/** The e-mail of an environment's invoices: what was sent, and sending a copy on request. */
export class InvoiceEmailService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  /** The messages about one invoice or credit note, oldest first. */
  list(invoiceId: string): Promise<InvoiceEmail[]> {
    return this.ctx.em.find(
      InvoiceEmailSchema,
      { environmentId: this.ctx.environmentId, invoiceId },
      { orderBy: { createdAt: 'asc', id: 'asc' } },
    );
  }

  /**
   * Queues a copy of a booked document to its customer's e-mail address, whatever the customer's
   * collection mode. A second request before the first copy went out is the same copy: a double
   * click sends one message.
   */
  requestSend(invoiceId: string): Promise<Invoice> {
    return changeInvoice(this.ctx, invoiceId, async (tx, invoice) => {
      if (invoice.status !== 'booked') {
        throw new DomainError('CONFLICT', 'a draft cannot be sent; book it first');
      }
      const { environmentId } = this.ctx;
      const customer = await tx.findOneOrFail(CustomerSchema, { id: invoice.customerId, environmentId });
      if (!customer.email) {
        throw new DomainError('CONFLICT', `customer ${customer.id} has no e-mail address; set one first`);
      }
      const [row] = await tx.execute<{ next: number }[]>(
        `select coalesce(max(sequence) filter (where status = 'sent'), -1) + 1 as next
         from invoice_email where invoice_id = ? and kind = 'invoice'`,
        [invoice.id],
      );
      const sequence = Math.max(1, Number(row?.next ?? 1));
      await enqueueJob(
        tx,
        INVOICE_EMAIL_TASK,
        { environmentId, invoiceId, sequence } satisfies InvoiceEmailRequest,
        {
          jobKey: `${INVOICE_EMAIL_TASK}:${invoice.id}:${sequence}`,
          maxAttempts: REQUESTED_ATTEMPTS,
        },
      );
      return invoice;
    });
  }
}
