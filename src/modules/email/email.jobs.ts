import type { Task } from 'graphile-worker';
import { AccessService } from '../../auth/access.service.ts';
import { inEnvironment } from '../../db/tenant-transaction.ts';
import type { JobDependencies, PublishedEvent } from '../../jobs/runner.ts';
import { EventSchema } from '../event/event.entity.ts';
import { InvoiceMailer } from './email.sender.ts';
import { INVOICE_EMAIL_TASK, type InvoiceEmailRequest } from './email.service.ts';
import { createMailer, type Mailer } from './email.transport.ts';

export const INVOICE_REMINDERS_TASK = 'invoice-reminders';

/** Events that send the booked document to customers who get their invoices by e-mail. */
export const EMAILED_EVENTS = ['invoice.booked', 'credit_note.booked'] as const;

/** What sending does on a server without SMTP_URL: a copy someone asked for fails, visibly. */
const NO_SMTP: Mailer = {
  send: () => Promise.reject(new Error('this server sends no e-mail: SMTP_URL is not set')),
  close: () => {},
};

/**
 * Invoice e-mail: the booked document to a send_invoice customer, a copy on request, and reminders
 * for overdue invoices (hourly). Without SMTP_URL the automatic ones send nothing.
 */
export function emailTasks({ orm, logger, settings }: JobDependencies): Record<string, Task> {
  const mail = settings.mail;
  const mailer = new InvoiceMailer(orm, mail ? createMailer(mail) : NO_SMTP, logger);
  return {
    [INVOICE_EMAIL_TASK]: async (payload) => {
      if (!('eventId' in (payload as object))) {
        const { environmentId, invoiceId, sequence } = payload as InvoiceEmailRequest;
        await mailer.send({ environmentId, invoiceId, kind: 'invoice', sequence }, { automatic: false });
        return;
      }
      if (!mail) return;
      const { eventId, environmentId } = payload as PublishedEvent;
      const event = await inEnvironment(orm.em.fork(), environmentId, (tx) =>
        tx.findOne(EventSchema, { id: eventId, environmentId }),
      );
      // An event past its retention has been purged; its document was due days ago.
      if (!event) return;
      const outcome = await mailer.send(
        { environmentId, invoiceId: event.objectId, kind: 'invoice', sequence: 0 },
        { automatic: true },
      );
      logger.debug({ environmentId, invoiceId: event.objectId, outcome }, 'invoice e-mail');
    },
    [INVOICE_REMINDERS_TASK]: async () => {
      if (!mail) return;
      const now = new Date();
      for (const { id: environmentId } of await new AccessService(orm.em.fork()).listEnvironments()) {
        const sent = await mailer.sendDueReminders(environmentId, now);
        if (sent > 0) logger.info({ environmentId, count: sent }, 'sent reminders for overdue invoices');
      }
    },
  };
}
