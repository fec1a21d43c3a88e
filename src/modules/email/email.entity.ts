import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../../db/tenant-keys.ts';

/** An environment's invoice e-mail: who it comes from, its templates and how often it reminds. */
export const EmailSettingsSchema = defineEntity({
  name: 'EmailSettings',
  tableName: 'email_settings',
  properties: {
    ...tenantKeys(),
    senderName: p.string().length(250).nullable(),
    replyTo: p.string().length(320).nullable(),
    invoiceSubject: p.text(),
    invoiceBody: p.text(),
    reminderSubject: p.text(),
    reminderBody: p.text(),
    reminderIntervalDays: p.integer(),
    maxReminders: p.integer(),
    updatedAt: p.datetime().nullable(),
  },
});

export type EmailSettings = InferEntity<typeof EmailSettingsSchema>;

export const EMAIL_KINDS = ['invoice', 'reminder'] as const;
export type EmailKind = (typeof EMAIL_KINDS)[number];

export const EMAIL_STATUSES = ['sending', 'sent', 'failed'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

/**
 * One message to a customer about one invoice or credit note: the document itself (`invoice`,
 * sequence 0) or its n-th reminder (`reminder`, sequence n).
 */
export const InvoiceEmailSchema = defineEntity({
  name: 'InvoiceEmail',
  tableName: 'invoice_email',
  properties: {
    ...tenantKeys(),
    invoiceId: p.uuid(),
    kind: p.enum(EMAIL_KINDS),
    sequence: p.integer(),
    recipient: p.string().length(320),
    subject: p.text(),
    status: p.enum(EMAIL_STATUSES),
    messageId: p.text().nullable(),
    error: p.text().nullable(),
    attempts: p.integer().default(1),
    createdAt: p.datetime().onCreate(() => new Date()),
    /** When the last try began: a try younger than IN_FLIGHT_MS may still be talking to the SMTP server. */
    attemptedAt: p.datetime(),
    sentAt: p.datetime().nullable(),
  },
});

export type InvoiceEmail = InferEntity<typeof InvoiceEmailSchema>;
