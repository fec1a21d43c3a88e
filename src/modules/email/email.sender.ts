import { LockMode } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { createJobContext } from '../../context.ts';
import { today } from '../../dates/calendar.ts';
import { inEnvironment } from '../../db/tenant-transaction.ts';
import type { Logger } from '../../logger.ts';
import { formatMoney } from '../../money/format.ts';
import { type Customer, CustomerSchema } from '../customer/customer.entity.ts';
import { type Invoice, InvoiceSchema } from '../invoice/invoice.entity.ts';
import { PDF_MEDIA_TYPE, pdfFileName, renderInvoicePdf } from '../invoice/invoice.pdf.ts';
import { InvoiceReads, type PrintableInvoice } from '../invoice/invoice.reads.ts';
import { amountDue, daysOverdue } from '../invoice/invoice-collection.ts';
import { overdueWhere } from '../invoice/invoice-overdue.where.ts';
import { type EmailKind, type EmailSettings, InvoiceEmailSchema } from './email.entity.ts';
import { fillTemplate, type TemplateValues } from './email.templates.ts';
import type { Mailer, OutgoingMail } from './email.transport.ts';
import { effectiveEmailSettings } from './email-settings.service.ts';

/**
 * Which message: the document (sequence 0 when sent at booking, 1, 2, … for copies asked for) or its
 * n-th reminder.
 */
export type MessageRef = { environmentId: string; invoiceId: string; kind: EmailKind; sequence: number };

/**
 * `automatic`: sent because something happened (booking, a reminder falling due), so only to customers
 * whose collection mode is send_invoice; otherwise someone asked for it.
 */
export type SendMode = { automatic: boolean };

export type SendOutcome = 'sent' | 'already sent' | 'not booked' | 'not sent by e-mail' | 'no e-mail address';

/**
 * Longer than a try can take (SMTP timeouts, src/modules/email/email.transport.ts, plus rendering): a
 * message marked sending more recently than this is another worker's, still under way.
 */
const IN_FLIGHT_MS = 120_000;

type Prepared = { emailId: string; mail: Omit<OutgoingMail, 'attachment'>; printable: PrintableInvoice };

/**
 * Sends invoices, credit notes and reminders to customers by e-mail, PDF attached. Each message is
 * recorded before it goes out and marked when the SMTP server took it: a job retried after a failure
 * or a crash sends what was not confirmed and skips what was (at least once, never twice once confirmed).
 */
export class InvoiceMailer {
  private readonly orm: MikroORM;
  private readonly mailer: Mailer;
  private readonly logger: Logger;

  constructor(orm: MikroORM, mailer: Mailer, logger: Logger) {
    this.orm = orm;
    this.mailer = mailer;
    this.logger = logger;
  }

  async send(ref: MessageRef, mode: SendMode): Promise<SendOutcome> {
    const prepared = await inEnvironment(this.orm.em.fork(), ref.environmentId, (tx) =>
      this.prepare(tx, ref, mode),
    );
    if (typeof prepared === 'string') return prepared;
    const content = await renderInvoicePdf(prepared.printable);
    const attachment = {
      filename: pdfFileName(prepared.printable.invoice),
      content,
      contentType: PDF_MEDIA_TYPE,
    };
    try {
      const { messageId } = await this.mailer.send({ ...prepared.mail, attachment });
      await this.mark(ref.environmentId, prepared.emailId, {
        status: 'sent',
        messageId,
        sentAt: new Date(),
        error: null,
      });
      return 'sent';
    } catch (error) {
      await this.mark(ref.environmentId, prepared.emailId, {
        status: 'failed',
        error: (error as Error).message,
      });
      throw error;
    }
  }

  /** Sends each reminder that has fallen due in the environment; returns how many went out. */
  async sendDueReminders(environmentId: string, now: Date): Promise<number> {
    const due = await inEnvironment(this.orm.em.fork(), environmentId, (tx) =>
      this.dueReminders(tx, environmentId, now),
    );
    let sent = 0;
    for (const ref of due) {
      try {
        if ((await this.send(ref, { automatic: true })) === 'sent') sent += 1;
      } catch (error) {
        // Recorded as failed: the next round sends it again, and the others still go out now.
        this.logger.warn(
          { err: error, environmentId, invoiceId: ref.invoiceId },
          'a reminder could not be sent',
        );
      }
    }
    return sent;
  }

  private async prepare(tx: EntityManager, ref: MessageRef, mode: SendMode): Promise<Prepared | SendOutcome> {
    const { environmentId, invoiceId, kind, sequence } = ref;
    const invoice = await tx.findOne(InvoiceSchema, { id: invoiceId, environmentId });
    if (invoice?.status !== 'booked') return 'not booked';
    const customer = await tx.findOneOrFail(CustomerSchema, { id: invoice.customerId, environmentId });
    if (mode.automatic && customer.collectionMode !== 'send_invoice') return 'not sent by e-mail';
    if (!customer.email) return 'no e-mail address';
    const existing = await tx.findOne(
      InvoiceEmailSchema,
      { environmentId, invoiceId, kind, sequence },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (existing?.status === 'sent') return 'already sent';
    const now = new Date();
    if (existing?.status === 'sending' && now.getTime() - existing.attemptedAt.getTime() < IN_FLIGHT_MS) {
      // Thrown, not returned: the job retries later and then finds it sent, or abandoned and sends it.
      throw new Error(`message ${existing.id} is being sent by another worker`);
    }

    const settings = await effectiveEmailSettings(tx, environmentId);
    const printable = await new InvoiceReads(
      createJobContext(tx, environmentId, 'invoiceEmail'),
    ).readPrintable(invoiceId);
    const values = templateValues(printable, customer, settings, kind === 'reminder' ? sequence : 0);
    const [subjectTemplate, bodyTemplate] =
      kind === 'invoice'
        ? [settings.invoiceSubject, settings.invoiceBody]
        : [settings.reminderSubject, settings.reminderBody];
    // A subject is one line whatever its placeholders hold.
    const subject = fillTemplate(subjectTemplate, values).replace(/\s+/g, ' ').trim();
    const recipient = customer.email;
    const email =
      existing ??
      tx.create(InvoiceEmailSchema, {
        environmentId,
        invoiceId,
        kind,
        sequence,
        recipient,
        subject,
        status: 'sending',
        attemptedAt: now,
      });
    if (existing) {
      Object.assign(existing, {
        recipient,
        subject,
        status: 'sending',
        attempts: existing.attempts + 1,
        attemptedAt: now,
      });
    }
    await tx.flush();
    return {
      emailId: email.id,
      printable,
      mail: {
        fromName: values.sellerName,
        replyTo: settings.replyTo ?? null,
        to: recipient,
        subject,
        text: fillTemplate(bodyTemplate, values),
      },
    };
  }

  private async dueReminders(tx: EntityManager, environmentId: string, now: Date): Promise<MessageRef[]> {
    const settings = await effectiveEmailSettings(tx, environmentId);
    if (settings.reminderIntervalDays === 0 || settings.maxReminders === 0) return [];
    const overdue = await tx.find(InvoiceSchema, {
      $and: [{ environmentId, type: 'invoice' }, overdueWhere(today(now))],
    });
    if (overdue.length === 0) return [];
    const reminders = await tx.find(
      InvoiceEmailSchema,
      { environmentId, kind: 'reminder', invoiceId: { $in: overdue.map((invoice) => invoice.id) } },
      { orderBy: { sequence: 'desc' } },
    );
    const intervalMs = settings.reminderIntervalDays * 86_400_000;
    return overdue.flatMap((invoice): MessageRef[] => {
      const last = reminders.find((reminder) => reminder.invoiceId === invoice.id);
      const base = { environmentId, invoiceId: invoice.id, kind: 'reminder' as const };
      // The first reminder as soon as the invoice is overdue; an unconfirmed one is sent again.
      if (!last) return [{ ...base, sequence: 1 }];
      if (last.status !== 'sent') return [{ ...base, sequence: last.sequence }];
      const dueAgain = (last.sentAt as Date).getTime() + intervalMs <= now.getTime();
      return dueAgain && last.sequence < settings.maxReminders
        ? [{ ...base, sequence: last.sequence + 1 }]
        : [];
    });
  }

  private async mark(
    environmentId: string,
    emailId: string,
    changes: Record<string, unknown>,
  ): Promise<void> {
    await inEnvironment(this.orm.em.fork(), environmentId, async (tx) => {
      const email = await tx.findOneOrFail(InvoiceEmailSchema, { id: emailId, environmentId });
      Object.assign(email, changes);
      await tx.flush();
    });
  }
}

function templateValues(
  printable: PrintableInvoice,
  customer: Customer,
  settings: EmailSettings,
  reminderNumber: number,
): TemplateValues {
  const invoice: Invoice = printable.invoice;
  const money = (minor: number) => formatMoney(minor, invoice.currency);
  return {
    documentType: invoice.type === 'credit_note' ? 'credit note' : 'invoice',
    number: invoice.handle ?? '',
    customerName: printable.customer.name,
    companyName: customer.companyName ?? '',
    sellerName: settings.senderName ?? printable.seller.legalName,
    date: invoice.date,
    dueDate: invoice.dueDate ?? '',
    total: money(invoice.totalInclVat),
    totalDue: money(amountDue(invoice)),
    daysOverdue: String(daysOverdue(invoice, today())),
    reminderNumber: reminderNumber > 0 ? String(reminderNumber) : '',
  };
}
