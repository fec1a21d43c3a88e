import { Migration } from '@mikro-orm/migrations';

/**
 * Invoice e-mail: each environment's templates and reminder rhythm, and a record of every message
 * (the invoice, a credit note, each reminder) sent to a customer. One row per message and sequence
 * number, so a retried job finds what was already sent instead of sending it twice.
 */
export class Migration20261124140000InvoiceEmail extends Migration {
  override up(): void {
    this.addSql(`
      create table email_settings (
        id uuid primary key,
        environment_id uuid not null unique references environment (id),
        sender_name varchar(250),
        reply_to varchar(320),
        invoice_subject text not null,
        invoice_body text not null,
        reminder_subject text not null,
        reminder_body text not null,
        reminder_interval_days integer not null check (reminder_interval_days between 0 and 365),
        max_reminders integer not null check (max_reminders between 0 and 50),
        updated_at timestamptz
      );
      select enable_tenant_isolation('email_settings');

      create table invoice_email (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        invoice_id uuid not null references invoice (id),
        kind text not null check (kind in ('invoice', 'reminder')),
        sequence integer not null,
        recipient varchar(320) not null,
        subject text not null,
        status text not null check (status in ('sending', 'sent', 'failed')),
        message_id text,
        error text,
        attempts integer not null default 1,
        created_at timestamptz not null,
        attempted_at timestamptz not null,
        sent_at timestamptz,
        unique (invoice_id, kind, sequence)
      );
      create index invoice_email_environment_id_index on invoice_email (environment_id, invoice_id, id);
      select enable_tenant_isolation('invoice_email');
    `);
  }

  override down(): void {
    this.addSql('drop table invoice_email; drop table email_settings;');
  }
}
