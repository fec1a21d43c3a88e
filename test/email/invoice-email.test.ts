import type { AddressInfo } from 'node:net';
import type { JobHelpers, Task } from 'graphile-worker';
import { type ParsedMail, simpleParser } from 'mailparser';
import { pino } from 'pino';
import { SMTPServer } from 'smtp-server';
import { extractText, getDocumentProxy } from 'unpdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobRunner } from '../../src/jobs/runner.ts';
import { startWorker } from '../../src/jobs/worker.ts';
import { emailTasks, INVOICE_REMINDERS_TASK } from '../../src/modules/email/email.jobs.ts';
import { InvoiceMailer } from '../../src/modules/email/email.sender.ts';
import { INVOICE_EMAIL_TASK } from '../../src/modules/email/email.service.ts';
import { createMailer } from '../../src/modules/email/email.transport.ts';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);
const logger = pino({ level: 'silent' });
const FROM = 'billing@example.com';

const until = async (check: () => Promise<boolean>, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/** A real SMTP server in the test process: what it accepted, parsed; it refuses while `refusing` > 0. */
function smtpServer() {
  const received: ParsedMail[] = [];
  const state = { refusing: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (mail) => {
          if (state.refusing > 0) {
            state.refusing -= 1;
            const refusal = Object.assign(new Error('mailbox busy, try later'), { responseCode: 451 });
            callback(refusal);
            return;
          }
          received.push(mail);
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  return { server, received, state };
}

const BOOK = `mutation ($id: UUID!) { invoiceBook(id: $id) { invoice { id handle } userErrors { code message } } }`;
const SETTINGS = `mutation ($input: EmailSettingsUpdateInput!) {
  emailSettingsUpdate(input: $input) { emailSettings { invoiceSubject replyTo } userErrors { field code message } } }`;
const SEND = `mutation ($id: UUID!) { invoiceEmailSend(id: $id) { invoice { id } userErrors { code message } } }`;
const EMAILS = `query ($id: UUID!) { invoice(id: $id) { emails { kind sequence recipient subject status attempts error } } }`;

async function pdfText(content: Buffer): Promise<string> {
  const pdf = await getDocumentProxy(new Uint8Array(content));
  return (await extractText(pdf, { mergePages: true })).text;
}

describe('invoice e-mail', () => {
  const smtp = smtpServer();
  let smtpUrl: string;
  let worker: JobRunner;
  let env: TestEnvironment;

  const customer = (input: Record<string, unknown>) => f.createCustomer(env, input);
  const booked = async (customerId: string, dueDate = '2999-01-01') => {
    const draft = await f.createInvoice(env, {
      customerId,
      dueDate,
      items: [{ title: 'Consulting', quantity: 2, unitAmount: 15_000 }],
    });
    const data = await f.gql(env, BOOK, { id: draft.id });
    expect(data.invoiceBook.userErrors).toEqual([]);
    return data.invoiceBook.invoice as { id: string; handle: string };
  };
  const emails = async (id: string) => (await f.gql(env, EMAILS, { id })).invoice.emails;
  const mailsFor = (handle: string) => smtp.received.filter((mail) => mail.subject?.includes(handle));
  const idle = () =>
    until(async () => {
      const [row] = await t.sql<{ waiting: number }>(
        `select (select count(*)::int from graphile_worker._private_jobs j
                 join graphile_worker._private_tasks task on task.id = j.task_id
                 where task.identifier = $1)
              + (select count(*)::int from event_relay.outbox) as waiting`,
        [INVOICE_EMAIL_TASK],
      );
      return row?.waiting === 0;
    });

  beforeAll(async () => {
    await new Promise<void>((resolve) => smtp.server.listen(0, '127.0.0.1', resolve));
    smtpUrl = `smtp://127.0.0.1:${(smtp.server.server.address() as AddressInfo).port}`;
    env = await t.createEnvironment('Acme Billing');
    worker = await startMailingWorker();
  });

  const startMailingWorker = () =>
    startWorker(
      {
        BILLING_RUN_SCHEDULE: 'off',
        JOB_CONCURRENCY: 2,
        EVENT_RETENTION_DAYS: 30,
        SMTP_URL: smtpUrl,
        MAIL_FROM: FROM,
      },
      { orm: t.orm, ownerUrl: t.databaseUrl, logger },
    );

  afterAll(async () => {
    await worker?.stop();
    await new Promise<void>((resolve) => smtp.server.close(() => resolve()));
  });

  it('sends a booked invoice to a send_invoice customer with its PDF, and nothing to an automatic one', async () => {
    // given a customer who gets invoices by e-mail and one who pays automatically
    const mailed = await customer({
      name: 'Grace Hopper',
      email: 'grace@example.org',
      collectionMode: 'send_invoice',
    });
    const automatic = await customer({
      name: 'Alan Turing',
      email: 'alan@example.org',
      collectionMode: 'automatic',
    });

    // when an invoice of each is booked
    const quiet = await booked(automatic);
    const invoice = await booked(mailed);

    // then the send_invoice customer gets one message, from the environment, with the PDF of that invoice
    await until(async () => mailsFor(invoice.handle).length > 0);
    await idle();
    const [mail] = mailsFor(invoice.handle);
    expect(mailsFor(invoice.handle)).toHaveLength(1);
    expect(mail?.subject).toBe(`Your invoice ${invoice.handle} from Acme Billing`);
    expect(mail?.from?.value).toEqual([{ name: 'Acme Billing', address: FROM }]);
    expect(mail?.to && 'value' in mail.to ? mail.to.value : []).toEqual([
      { name: '', address: 'grace@example.org' },
    ]);
    expect(mail?.text).toContain('Hello Grace Hopper');
    expect(mail?.text).toContain('€300.00');
    expect(mail?.attachments).toHaveLength(1);
    const [attachment] = mail?.attachments ?? [];
    expect(attachment?.filename).toBe(`${invoice.handle}.pdf`);
    expect(attachment?.contentType).toBe('application/pdf');
    const text = await pdfText(attachment?.content as Buffer);
    expect(text).toContain(invoice.handle);
    expect(text).toContain('Grace Hopper');
    expect(await emails(invoice.id)).toEqual([
      {
        kind: 'invoice',
        sequence: 0,
        recipient: 'grace@example.org',
        subject: mail?.subject,
        status: 'sent',
        attempts: 1,
        error: null,
      },
    ]);

    // and the automatic customer none
    expect(mailsFor(quiet.handle)).toEqual([]);
    expect(await emails(quiet.id)).toEqual([]);
  });

  it('words the message as the environment says, and refuses a template with an unknown placeholder', async () => {
    const refused = await f.gql(env, SETTINGS, { input: { invoiceSubject: 'Invoice {{numbr}}' } });
    expect(refused.emailSettingsUpdate.userErrors).toEqual([
      {
        field: ['input', 'invoiceSubject'],
        code: 'INVALID_INPUT',
        message: expect.stringContaining('unknown placeholder {{numbr}}'),
      },
    ]);
    const changed = await f.gql(env, SETTINGS, {
      input: {
        invoiceSubject: '{{sellerName}} – invoice {{number}}, due {{dueDate}}',
        replyTo: 'ar@example.com',
      },
    });
    expect(changed.emailSettingsUpdate).toEqual({
      emailSettings: {
        invoiceSubject: '{{sellerName}} – invoice {{number}}, due {{dueDate}}',
        replyTo: 'ar@example.com',
      },
      userErrors: [],
    });

    const invoice = await booked(
      await customer({ name: 'Mary', email: 'mary@example.org', collectionMode: 'send_invoice' }),
    );

    await until(async () => mailsFor(invoice.handle).length > 0);
    const [mail] = mailsFor(invoice.handle);
    expect(mail?.subject).toBe(`Acme Billing – invoice ${invoice.handle}, due 2999-01-01`);
    expect(mail?.replyTo?.value).toEqual([{ name: '', address: 'ar@example.com' }]);
  });

  it('sends a copy on request once however often it is asked, and refuses drafts and customers without an address', async () => {
    const customerId = await customer({
      name: 'Ada',
      email: 'ada@example.org',
      collectionMode: 'draft_invoice',
    });
    const invoice = await booked(customerId);

    // when a copy is asked for twice before it went out (a double click while no worker runs)
    await idle();
    await worker.stop();
    const [first, second] = await Promise.all([
      f.gql(env, SEND, { id: invoice.id }),
      f.gql(env, SEND, { id: invoice.id }),
    ]);
    expect(first.invoiceEmailSend.userErrors).toEqual([]);
    expect(second.invoiceEmailSend.userErrors).toEqual([]);
    worker = await startMailingWorker();

    // then one copy went out
    await until(async () => mailsFor(invoice.handle).length > 0);
    await idle();
    console.log(
      invoice.handle,
      mailsFor(invoice.handle).map((m) => m.subject),
      JSON.stringify(await emails(invoice.id)),
    );
    expect(mailsFor(invoice.handle)).toHaveLength(1);
    expect(await emails(invoice.id)).toMatchObject([{ kind: 'invoice', sequence: 1, status: 'sent' }]);

    // and refusals say why
    const draft = await f.createInvoice(env, {
      customerId,
      items: [{ title: 'Later', quantity: 1, unitAmount: 1 }],
    });
    expect((await f.gql(env, SEND, { id: draft.id })).invoiceEmailSend.userErrors).toEqual([
      { code: 'CONFLICT', message: 'a draft cannot be sent; book it first' },
    ]);
    const silent = await booked(await customer({ name: 'No address', collectionMode: 'send_invoice' }));
    expect((await f.gql(env, SEND, { id: silent.id })).invoiceEmailSend.userErrors).toEqual([
      { code: 'CONFLICT', message: expect.stringContaining('has no e-mail address') },
    ]);
  });

  it('reminds of an overdue invoice once per interval, at most maxReminders times', async () => {
    await f.gql(env, SETTINGS, { input: { reminderIntervalDays: 7, maxReminders: 2 } });
    const customerId = await customer({
      name: 'Late',
      email: 'late@example.org',
      collectionMode: 'send_invoice',
    });
    const invoice = await booked(customerId, '2026-03-15');
    await until(async () => mailsFor(invoice.handle).length > 0);
    const mailer = new InvoiceMailer(t.orm, createMailer({ smtpUrl, from: FROM }), logger);
    const reminders = () => mailsFor(invoice.handle).filter((mail) => mail.subject?.startsWith('Reminder'));

    // the hourly task, run twice on one day, sends the first reminder once
    const task = emailTasks({
      orm: t.orm,
      logger,
      settings: { eventRetentionDays: 30, mail: { smtpUrl, from: FROM } },
      eventListeners: [],
    })[INVOICE_REMINDERS_TASK] as Task;
    await task({}, {} as JobHelpers);
    await task({}, {} as JobHelpers);
    expect(reminders().map((mail) => mail.subject)).toEqual([
      expect.stringMatching(new RegExp(`^Reminder: invoice ${invoice.handle} is \\d+ days overdue$`)),
    ]);
    expect(reminders()[0]?.text).toContain('€300.00 still due');

    // six days later nothing more, eight days later the second, and never a third
    const day = 86_400_000;
    expect(await mailer.sendDueReminders(env.id, new Date(Date.now() + 6 * day))).toBe(0);
    expect(await mailer.sendDueReminders(env.id, new Date(Date.now() + 8 * day))).toBe(1);
    expect(await mailer.sendDueReminders(env.id, new Date(Date.now() + 30 * day))).toBe(0);
    expect(reminders()).toHaveLength(2);
    expect(
      (await emails(invoice.id)).map((email: { kind: string; sequence: number }) => email),
    ).toMatchObject([
      { kind: 'invoice', sequence: 0 },
      { kind: 'reminder', sequence: 1, status: 'sent' },
      { kind: 'reminder', sequence: 2, status: 'sent' },
    ]);
  });

  it('records a refused message as failed and sends it when retried, once', async () => {
    const customerId = await customer({
      name: 'Retry',
      email: 'retry@example.org',
      collectionMode: 'draft_invoice',
    });
    const invoice = await booked(customerId);
    const mailer = new InvoiceMailer(t.orm, createMailer({ smtpUrl, from: FROM }), logger);
    const ref = { environmentId: env.id, invoiceId: invoice.id, kind: 'invoice' as const, sequence: 5 };

    smtp.state.refusing = 1;
    await expect(mailer.send(ref, { automatic: false })).rejects.toThrow('mailbox busy');
    expect(await emails(invoice.id)).toMatchObject([
      { status: 'failed', attempts: 1, error: expect.stringContaining('mailbox busy') },
    ]);

    // a try still under way elsewhere is not doubled; one abandoned (a crashed worker) is taken over
    await t.sql(`update invoice_email set status = 'sending', attempted_at = now() where invoice_id = $1`, [
      invoice.id,
    ]);
    await expect(mailer.send(ref, { automatic: false })).rejects.toThrow('is being sent by another worker');
    expect(mailsFor(invoice.handle)).toEqual([]);
    await t.sql(
      `update invoice_email set attempted_at = now() - interval '3 minutes' where invoice_id = $1`,
      [invoice.id],
    );
    expect(await mailer.send(ref, { automatic: false })).toBe('sent');
    expect(await mailer.send(ref, { automatic: false })).toBe('already sent');
    expect(mailsFor(invoice.handle)).toHaveLength(1);
    expect(await emails(invoice.id)).toMatchObject([{ status: 'sent', attempts: 2, error: null }]);
  });

  it('sends nothing when the server has no SMTP_URL', async () => {
    const customerId = await customer({
      name: 'Offline',
      email: 'offline@example.org',
      collectionMode: 'send_invoice',
    });
    const invoice = await booked(customerId);
    await until(async () => mailsFor(invoice.handle).length > 0);
    const [event] = await t.sql<{ id: string }>(
      `select id from event where object_id = $1 and type = 'invoice.booked'`,
      [invoice.id],
    );
    await t.sql('delete from invoice_email where invoice_id = $1', [invoice.id]);

    const unconfigured = emailTasks({
      orm: t.orm,
      logger,
      settings: { eventRetentionDays: 30, mail: null },
      eventListeners: [],
    });
    await (unconfigured[INVOICE_EMAIL_TASK] as Task)(
      { eventId: event?.id, environmentId: env.id, type: 'invoice.booked' },
      {} as JobHelpers,
    );
    await (unconfigured[INVOICE_REMINDERS_TASK] as Task)({}, {} as JobHelpers);
    expect(await emails(invoice.id)).toEqual([]);
    expect(mailsFor(invoice.handle)).toHaveLength(1);
  });
});
