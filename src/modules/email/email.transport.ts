import type { Transporter } from 'nodemailer';
import type { MailSettings } from '../../jobs/runner.ts';

export type OutgoingMail = {
  fromName: string | null;
  replyTo: string | null;
  to: string;
  subject: string;
  text: string;
  attachment: { filename: string; content: Uint8Array; contentType: string };
};

export type Mailer = { send: (mail: OutgoingMail) => Promise<{ messageId: string }>; close: () => void };

/** Bounds on a slow or silent SMTP server, so a job fails and retries instead of hanging. */
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/**
 * An SMTP client (nodemailer) for `settings`; one per worker, reusing its connections. nodemailer is
 * loaded with the first message: a server that sends no e-mail does not hold its code (about 1.6 MB of
 * heap).
 */
export function createMailer(settings: MailSettings): Mailer {
  let transport: Promise<Transporter> | undefined;
  const connected = () =>
    (transport ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({ url: settings.smtpUrl, ...TIMEOUTS }),
    ));
  return {
    send: async (mail) => {
      const info = await (await connected()).sendMail({
        from: mail.fromName ? { name: mail.fromName, address: settings.from } : settings.from,
        ...(mail.replyTo ? { replyTo: mail.replyTo } : {}),
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        attachments: [
          {
            filename: mail.attachment.filename,
            content: Buffer.from(mail.attachment.content),
            contentType: mail.attachment.contentType,
          },
        ],
      });
      return { messageId: info.messageId };
    },
    close: () => void transport?.then((opened) => opened.close()),
  };
}
