import { Migration } from '@mikro-orm/migrations';

/**
 * A refund paid out of a customer's credit balance belongs to no invoice: its entry names the refund
 * instead (customer credit debited, cash credited), once per refund.
 */
export class Migration20261124160000LedgerRefunds extends Migration {
  override up(): void {
    this.addSql(`
      alter table journal_entry alter column invoice_id drop not null;
      alter table journal_entry add column refund_id uuid references refund (id);
      create unique index journal_entry_refund_unique on journal_entry (refund_id) where refund_id is not null;
      alter table journal_entry drop constraint journal_entry_kind_check;
      alter table journal_entry add constraint journal_entry_kind_check
        check (kind in ('booking', 'credit_note', 'settlement', 'void', 'recognition', 'refund'));
      alter table journal_entry add constraint journal_entry_source_check
        check (case when kind = 'refund' then refund_id is not null else invoice_id is not null end);
    `);
  }

  override down(): void {
    this.addSql(`
      delete from journal_entry where kind = 'refund';
      alter table journal_entry drop constraint journal_entry_source_check;
      alter table journal_entry drop constraint journal_entry_kind_check;
      alter table journal_entry add constraint journal_entry_kind_check
        check (kind in ('booking', 'credit_note', 'settlement', 'void', 'recognition'));
      drop index journal_entry_refund_unique;
      alter table journal_entry drop column refund_id;
      alter table journal_entry alter column invoice_id set not null;
    `);
  }
}
