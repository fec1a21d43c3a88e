import type { EntityManager } from '@mikro-orm/postgresql';
import { CustomerSchema } from '../customer/customer.entity.ts';
import type { EventType } from '../event/event.entity.ts';
import { type EventInput, recordEvent } from '../event/event.service.ts';
import { customerSummary } from './invoice.change.ts';
import { type Invoice, InvoiceItemSchema, SettlementSchema } from './invoice.entity.ts';
import type { InvoiceDocument } from './invoice.reads.ts';
import { type InvoiceAnswer, invoiceResponse } from './invoice.rest.ts';

/**
 * Records an event about an invoice or credit note, carrying it as its REST answer shows it, read
 * in the transaction that changes it (after its changes are flushed).
 */
export async function recordInvoiceEvent(
  tx: EntityManager,
  type: EventType,
  invoice: Invoice,
): Promise<void> {
  const { environmentId } = invoice;
  const [items, settlements] = await Promise.all([
    tx.find(InvoiceItemSchema, { invoiceId: invoice.id, environmentId }, { orderBy: { id: 'asc' } }),
    tx.find(SettlementSchema, { invoiceId: invoice.id, environmentId }, { orderBy: { id: 'asc' } }),
  ]);
  const customer =
    invoice.customerSnapshot ??
    customerSummary(await tx.findOneOrFail(CustomerSchema, { id: invoice.customerId, environmentId }));
  recordEvent(tx, environmentId, invoiceEvent(type, { invoice, customer, items, settlements }));
}

/** The event about an invoice or credit note: the invoice as its REST answer shows it. */
export function invoiceEvent(type: EventType, document: InvoiceDocument): EventInput {
  return answerEvent(type, invoiceResponse(document));
}

/** The event carrying `answer`: an invoice or credit note as its REST answer shows it (invoiceResponse). */
export function answerEvent(type: EventType, answer: InvoiceAnswer): EventInput {
  return { type, objectType: answer.type, objectId: answer.id, data: answer };
}
