import { Migration } from '@mikro-orm/migrations';

/**
 * The general ledger (docs/ledger.md): which accounts an environment and its products post to, and
 * the journal of immutable, balanced, gaplessly numbered entries. The journal starts empty: invoices
 * booked before it existed are not posted after the fact, nor are their later settlements.
 */
export class Migration20261124120000Ledger extends Migration {
  override up(): void {
    this.addSql(`
      create table ledger_settings (
        environment_id uuid primary key references environment (id),
        default_account_set_id uuid not null,
        receivable_account_id uuid not null,
        cash_account_id uuid not null,
        customer_credit_account_id uuid not null,
        updated_at timestamptz,
        constraint ledger_settings_default_account_set_fk foreign key (environment_id, default_account_set_id)
          references account_set (environment_id, id),
        constraint ledger_settings_receivable_fk foreign key (environment_id, receivable_account_id)
          references ledger_account (environment_id, id),
        constraint ledger_settings_cash_fk foreign key (environment_id, cash_account_id)
          references ledger_account (environment_id, id),
        constraint ledger_settings_customer_credit_fk foreign key (environment_id, customer_credit_account_id)
          references ledger_account (environment_id, id)
      );
      select enable_tenant_isolation('ledger_settings');

      create table product_account_set (
        environment_id uuid not null references environment (id),
        product_id uuid primary key references product (id) on delete cascade,
        account_set_id uuid not null,
        constraint product_account_set_account_set_fk foreign key (environment_id, account_set_id)
          references account_set (environment_id, id)
      );
      select enable_tenant_isolation('product_account_set');

      create table journal_numbering (
        environment_id uuid primary key references environment (id),
        last_number bigint not null
      );
      select enable_tenant_isolation('journal_numbering');

      create table journal_entry (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        number bigint not null,
        kind text not null check (kind in ('booking', 'credit_note', 'settlement', 'void')),
        date date not null,
        invoice_id uuid not null references invoice (id),
        customer_id uuid not null references customer (id),
        currency varchar(3) not null,
        settlement_id uuid references settlement (id),
        created_at timestamptz not null,
        constraint journal_entry_environment_id_unique unique (environment_id, id),
        constraint journal_entry_number_unique unique (environment_id, number)
      );
      create index journal_entry_date_index on journal_entry (environment_id, date, number);
      create index journal_entry_invoice_index on journal_entry (environment_id, invoice_id, kind);
      create unique index journal_entry_settlement_unique on journal_entry (settlement_id)
        where settlement_id is not null;
      select enable_tenant_isolation('journal_entry');

      create table journal_line (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        entry_id uuid not null,
        account_id uuid not null,
        amount bigint not null check (amount <> 0),
        account_set_id uuid,
        invoice_item_id uuid references invoice_item (id),
        tax_code varchar(64),
        constraint journal_line_entry_fk foreign key (environment_id, entry_id)
          references journal_entry (environment_id, id),
        constraint journal_line_account_fk foreign key (environment_id, account_id)
          references ledger_account (environment_id, id)
      );
      create index journal_line_entry_index on journal_line (entry_id);
      create index journal_line_account_index on journal_line (environment_id, account_id);
      create index journal_line_item_index on journal_line (invoice_item_id) where invoice_item_id is not null;
      select enable_tenant_isolation('journal_line');

      create function journal_refuse_change() returns trigger language plpgsql as $fn$
      begin
        raise exception 'journal entries are immutable: post a correcting entry instead'
          using errcode = 'restrict_violation';
      end
      $fn$;
      create trigger journal_entry_immutable before update or delete on journal_entry
        for each row execute function journal_refuse_change();
      create trigger journal_line_immutable before update or delete on journal_line
        for each row execute function journal_refuse_change();

      -- Checked at commit, once every line of the entry is written.
      create function journal_check_balance() returns trigger language plpgsql as $fn$
      begin
        if (select coalesce(sum(amount), 0) from journal_line where entry_id = new.entry_id) <> 0 then
          raise exception 'journal entry % does not balance', new.entry_id using errcode = 'check_violation';
        end if;
        return null;
      end
      $fn$;
      create constraint trigger journal_line_balanced after insert on journal_line
        deferrable initially deferred for each row execute function journal_check_balance();
    `);
  }

  override down(): void {
    this.addSql(`
      drop table journal_line;
      drop table journal_entry;
      drop function journal_check_balance();
      drop function journal_refuse_change();
      drop table journal_numbering;
      drop table product_account_set;
      drop table ledger_settings;
    `);
  }
}
