import { Migration } from '@mikro-orm/migrations';

/**
 * Customer credit balances (per customer and currency, never negative), their movements, refunds, and
 * credit notes by amount or quantity with a reason and an outcome.
 *
 * A line may now be credited by several credit notes, each for part of it, so the one-credit-per-line
 * constraint goes; the service bounds the sum of the credits by the line's amount instead.
 */
export class Migration20261123110000CreditBalance extends Migration {
  override up(): void {
    this.addSql(`
      alter table invoice_item drop constraint invoice_item_credited_item_unique;
      create index invoice_item_credited_item_index on invoice_item (credited_item_id)
        where credited_item_id is not null;

      alter table invoice
        add column credit_reason text
          check (credit_reason in ('duplicate', 'fraudulent', 'order_change', 'product_unsatisfactory', 'other')),
        add column credit_outcome text
          check (credit_outcome in ('settle_invoice', 'credit_balance', 'refund'));
      update invoice set credit_reason = 'other', credit_outcome = 'settle_invoice' where type = 'credit_note';
      alter table invoice add constraint invoice_credit_details_check
        check ((type = 'credit_note') = (credit_reason is not null and credit_outcome is not null));

      create table customer_balance (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        customer_id uuid not null references customer (id),
        currency varchar(3) not null,
        amount bigint not null check (amount >= 0),
        created_at timestamptz not null,
        updated_at timestamptz,
        constraint customer_balance_customer_currency_unique unique (environment_id, customer_id, currency)
      );

      create table refund (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        customer_id uuid not null references customer (id),
        currency varchar(3) not null,
        amount bigint not null check (amount > 0),
        credit_note_id uuid references invoice (id),
        date date not null,
        reference varchar(250),
        note varchar(1000),
        created_at timestamptz not null
      );
      create index refund_customer_index on refund (environment_id, customer_id, id);
      create index refund_credit_note_index on refund (credit_note_id) where credit_note_id is not null;

      create table balance_transaction (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        customer_id uuid not null references customer (id),
        currency varchar(3) not null,
        type text not null check (type in ('overpayment', 'credit_note', 'applied', 'refund')),
        amount bigint not null check (amount <> 0),
        invoice_id uuid references invoice (id),
        refund_id uuid references refund (id) deferrable initially deferred,
        created_at timestamptz not null
      );
      create index balance_transaction_customer_index on balance_transaction (environment_id, customer_id, id);

      select enable_tenant_isolation('customer_balance');
      select enable_tenant_isolation('refund');
      select enable_tenant_isolation('balance_transaction');
    `);
  }

  override down(): void {
    this.addSql(`
      drop table balance_transaction; drop table refund; drop table customer_balance;
      alter table invoice drop constraint invoice_credit_details_check;
      alter table invoice drop column credit_outcome, drop column credit_reason;
      drop index invoice_item_credited_item_index;
      alter table invoice_item add constraint invoice_item_credited_item_unique unique (credited_item_id);
    `);
  }
}
