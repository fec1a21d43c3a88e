import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import { InvoiceRef } from '../invoice/invoice.graphql.ts';
import { EMAIL_KINDS, EMAIL_STATUSES, type EmailSettings, type InvoiceEmail } from './email.entity.ts';
import { InvoiceEmailService } from './email.service.ts';
import { TEMPLATE_PLACEHOLDERS } from './email.templates.ts';
import { EmailSettingsService, EmailSettingsUpdateInput } from './email-settings.service.ts';

const PLACEHOLDERS = Object.entries(TEMPLATE_PLACEHOLDERS)
  .map(([name, meaning]) => `{{${name}}} (${meaning})`)
  .join(', ');

const EmailSettingsRef = builder.objectRef<EmailSettings>('EmailSettings').implement({
  description:
    'How this environment e-mails invoices to customers whose collectionMode is send_invoice, and reminds ' +
    `them of overdue ones. Templates are plain text with placeholders: ${PLACEHOLDERS}.`,
  fields: (t) => ({
    senderName: t.exposeString('senderName', {
      nullable: true,
      description: 'The From name; the environment’s name when null. The address is the server’s MAIL_FROM.',
    }),
    replyTo: t.exposeString('replyTo', { nullable: true, description: 'Where customers’ replies go.' }),
    invoiceSubject: t.exposeString('invoiceSubject', { description: 'Subject template of invoice e-mails.' }),
    invoiceBody: t.exposeString('invoiceBody', {
      description: 'Body template of invoice e-mails (plain text).',
    }),
    reminderSubject: t.exposeString('reminderSubject', {
      description: 'Subject template of reminder e-mails.',
    }),
    reminderBody: t.exposeString('reminderBody', {
      description: 'Body template of reminder e-mails (plain text).',
    }),
    reminderIntervalDays: t.exposeInt('reminderIntervalDays', {
      description: 'Days between reminders; the first goes out once the invoice is overdue. 0: no reminders.',
    }),
    maxReminders: t.exposeInt('maxReminders', { description: 'Reminders per invoice at most.' }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it last changed (ISO 8601, UTC); null if it never changed.',
    }),
  }),
});

const EmailKindEnum = builder.enumType('InvoiceEmailKind', {
  values: describedValues(EMAIL_KINDS, {
    invoice: 'The e-mail sending a booked invoice.',
    reminder: 'A reminder of an overdue invoice.',
  }),
  description: 'invoice: the document itself (or a copy of it); reminder: a reminder of an overdue invoice.',
});
const EmailStatusEnum = builder.enumType('InvoiceEmailStatus', {
  values: describedValues(EMAIL_STATUSES, {
    sending: 'Handed to the mail server, not confirmed yet.',
    sent: 'Accepted by the mail server.',
    failed: 'The mail server refused it or could not be reached.',
  }),
  description: 'sending: handed to the job queue; sent: the SMTP server took it; failed: see error, retried.',
});

const InvoiceEmailRef = builder.objectRef<InvoiceEmail>('InvoiceEmail').implement({
  description: 'One e-mail to the customer about an invoice or credit note, with the PDF attached.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    kind: t.expose('kind', { type: EmailKindEnum, description: 'Invoice or reminder.' }),
    sequence: t.exposeInt('sequence', {
      description: 'invoice: 0 for the one sent at booking, 1, 2, … for copies; reminder: its number.',
    }),
    recipient: t.exposeString('recipient', { description: 'The address it was sent to.' }),
    subject: t.exposeString('subject', { description: 'Its subject, as sent.' }),
    status: t.expose('status', { type: EmailStatusEnum, description: 'Sending, sent or failed.' }),
    messageId: t.exposeString('messageId', {
      nullable: true,
      description: 'The Message-ID the SMTP server took.',
    }),
    error: t.exposeString('error', { nullable: true, description: 'Why the last try failed.' }),
    attempts: t.exposeInt('attempts', { description: 'How many times sending was tried.' }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
    sentAt: t.expose('sentAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the mail server accepted it (ISO 8601, UTC); null until then.',
    }),
  }),
});

builder.objectField(InvoiceRef, 'emails', (t) =>
  t.field({
    type: [InvoiceEmailRef],
    description: 'The e-mails sent (or being sent) to the customer about this document, oldest first.',
    resolve: (invoice, _args, ctx) => new InvoiceEmailService(ctx).list(invoice.id),
  }),
);

const EmailSettingsUpdateInputRef = builder
  .inputType('EmailSettingsUpdateInput', {
    description: 'Settings left out stay as they are; null resets senderName or replyTo.',
    fields: (t) => ({
      senderName: t.string({ description: 'A new From name; null: the environment’s name.' }),
      replyTo: t.string({ description: 'A new reply-to address; null: none.' }),
      invoiceSubject: t.string({ description: 'A new subject template of invoice e-mails.' }),
      invoiceBody: t.string({ description: 'A new body template of invoice e-mails.' }),
      reminderSubject: t.string({ description: 'A new subject template of reminder e-mails.' }),
      reminderBody: t.string({ description: 'A new body template of reminder e-mails.' }),
      reminderIntervalDays: t.int({ description: 'Days between reminders of an overdue invoice.' }),
      maxReminders: t.int({ description: 'Reminders sent at most per invoice.' }),
    }),
  })
  .validate(EmailSettingsUpdateInput);

const EmailSettingsUpdatePayload = payloadType(
  'EmailSettingsUpdatePayload',
  'emailSettings',
  EmailSettingsRef,
);
const InvoiceEmailSendPayload = payloadType('InvoiceEmailSendPayload', 'invoice', InvoiceRef);

builder.queryFields((t) => ({
  emailSettings: t.field({
    type: EmailSettingsRef,
    description: 'This environment’s invoice e-mail settings (the defaults until changed).',
    resolve: (_root, _args, ctx) => new EmailSettingsService(ctx).get(),
  }),
}));

builder.mutationFields((t) => ({
  emailSettingsUpdate: t.field({
    type: EmailSettingsUpdatePayload,
    description: 'Changes how invoices are e-mailed; a template naming an unknown placeholder is refused.',
    args: {
      input: t.arg({
        type: EmailSettingsUpdateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('emailSettings', () => new EmailSettingsService(ctx).update(input)),
  }),
  invoiceEmailSend: t.field({
    type: InvoiceEmailSendPayload,
    description:
      'Sends a copy of a booked invoice or credit note to its customer’s e-mail address now, whatever the ' +
      'collection mode; see its `emails` for the outcome. Asking again before the copy went out sends one.',
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) =>
      withUserErrors('invoice', () => new InvoiceEmailService(ctx).requestSend(id)),
  }),
}));
