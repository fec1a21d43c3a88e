import { Migration } from '@mikro-orm/migrations';

/**
 * Revenue recognition schedules: one row per share of a deferred invoice line, posted (deferral to
 * income) by the recognition job exactly once, or cancelled by a void. A credit note lowers the
 * open rows and records what it took back from income as a posted negative row, so a line's
 * non-cancelled rows always sum to its net amount less its credits.
 */
export class Migration20261124120100LedgerRecognition extends Migration {
  override up(): void {
    this.addSql(`
      create table recognition_row (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        invoice_id uuid not null references invoice (id),
        invoice_item_id uuid not null references invoice_item (id),
        account_set_id uuid not null,
        deferral_account_id uuid not null,
        income_account_id uuid not null,
        date date not null,
        amount bigint not null,
        posted_entry_id uuid,
        cancelled boolean not null default false,
        constraint recognition_row_posted_fk foreign key (environment_id, posted_entry_id)
          references journal_entry (environment_id, id),
        constraint recognition_row_account_set_fk foreign key (environment_id, account_set_id)
          references account_set (environment_id, id)
      );
      create index recognition_row_due_index on recognition_row (environment_id, date)
        where posted_entry_id is null and not cancelled;
      create index recognition_row_item_index on recognition_row (invoice_item_id);
      create index recognition_row_invoice_index on recognition_row (invoice_id);
      select enable_tenant_isolation('recognition_row');
      alter table journal_entry drop constraint journal_entry_kind_check;
      alter table journal_entry add constraint journal_entry_kind_check
        check (kind in ('booking', 'credit_note', 'settlement', 'void', 'recognition'));
    `);
  }

  override down(): void {
    this.addSql(`
      drop table recognition_row;
      alter table journal_entry drop constraint journal_entry_kind_check;
      alter table journal_entry add constraint journal_entry_kind_check
        check (kind in ('booking', 'credit_note', 'settlement', 'void'));
    `);
  }
}
