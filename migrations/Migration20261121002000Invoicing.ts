import { Migration } from '@mikro-orm/migrations';

export class Migration20261121002000Invoicing extends Migration {
  override up(): void {
    this.addSql(`
      create table invoice (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        type text not null check (type in ('invoice', 'credit_note')),
        status text not null check (status in ('draft', 'booked')),
        handle varchar(40),
        customer_id uuid not null references customer (id),
        customer_snapshot jsonb,
        credited_invoice_id uuid references invoice (id),
        currency varchar(3) not null,
        date date not null,
        due_date date,
        memo varchar(400),
        total_excl_vat bigint not null,
        total_vat bigint not null,
        total_incl_vat bigint not null,
        settled_amount bigint not null,
        settlement_status text not null
          check (settlement_status in ('settled', 'over_settled', 'under_settled', 'not_settled')),
        created_at timestamptz not null,
        updated_at timestamptz,
        booked_at timestamptz,
        constraint invoice_environment_handle_unique unique (environment_id, handle),
        constraint invoice_total_check check (total_incl_vat = total_excl_vat + total_vat),
        constraint invoice_booked_check
          check ((status = 'booked') = (handle is not null and customer_snapshot is not null and booked_at is not null)),
        constraint invoice_credit_note_check check ((type = 'credit_note') = (credited_invoice_id is not null)),
        constraint invoice_due_date_check check (due_date >= date)
      );
      create index invoice_environment_id_index on invoice (environment_id, id);
      create index invoice_customer_index on invoice (environment_id, customer_id, id);
      create index invoice_credited_invoice_index on invoice (credited_invoice_id)
        where credited_invoice_id is not null;

      create table invoice_item (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        invoice_id uuid not null references invoice (id) on delete cascade,
        credited_item_id uuid references invoice_item (id),
        quantity numeric(21, 6) not null,
        unit_amount numeric(21, 6) not null,
        sku varchar(250),
        title varchar(500) not null,
        description varchar(4000),
        period_start date,
        period_end date,
        tax_code varchar(64),
        tax_rate numeric(7, 4) check (tax_rate >= 0 and tax_rate <= 100),
        discount_percentage numeric(7, 4) not null check (discount_percentage >= 0 and discount_percentage <= 100),
        discount_amount numeric(21, 6) not null,
        amount bigint not null,
        tax_amount bigint not null,
        created_at timestamptz not null,
        constraint invoice_item_period_check check (period_start <= period_end),
        constraint invoice_item_tax_check check ((tax_code is null) = (tax_rate is null)),
        constraint invoice_item_credited_item_unique unique (credited_item_id)
      );
      create index invoice_item_invoice_index on invoice_item (invoice_id, id);

      create table settlement (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        invoice_id uuid not null references invoice (id),
        date date not null,
        amount bigint not null check (amount <> 0),
        reference varchar(250),
        note varchar(1000),
        created_at timestamptz not null
      );
      create index settlement_invoice_index on settlement (invoice_id, id);

      -- Gapless numbers come from this row, incremented in the booking transaction: a sequence
      -- would keep the numbers of rolled-back bookings and leave gaps.
      create table invoice_numbering (
        environment_id uuid not null references environment (id),
        type text not null check (type in ('invoice', 'credit_note')),
        prefix varchar(20) not null,
        last_number bigint not null check (last_number >= 0),
        primary key (environment_id, type)
      );
    `);
  }

  override down(): void {
    this.addSql(
      'drop table invoice_numbering; drop table settlement; drop table invoice_item; drop table invoice;',
    );
  }
}
