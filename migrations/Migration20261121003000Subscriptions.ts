import { Migration } from '@mikro-orm/migrations';

/**
 * Subscriptions, their items and usage, billing runs and the ledger of billed periods. Every table
 * carries environment_id, every unique constraint includes it, and references go through composite
 * foreign keys on (environment_id, id), so a row can only point at rows of its own environment.
 * Customers and products get the (environment_id, id) unique constraints those keys need.
 */
export class Migration20261121003000Subscriptions extends Migration {
  override up(): void {
    this.addSql(`
      alter table customer add constraint customer_environment_id_unique unique (environment_id, id);
      alter table product add constraint product_environment_id_unique unique (environment_id, id);

      create table subscription (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        customer_id uuid not null,
        handle varchar(250),
        currency varchar(3) not null,
        -- The anchor of every period boundary: the start of the first term.
        start_date date not null,
        term_start date not null,
        term_end date,
        -- The length each renewal adds, taken from the first term.
        renewal_unit text check (renewal_unit in ('day', 'month')),
        renewal_count integer check (renewal_count > 0),
        auto_renewal boolean not null,
        status text not null check (status in ('active', 'cancelled', 'ended')),
        cancelled_at timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz,
        constraint subscription_environment_id_unique unique (environment_id, id),
        constraint subscription_environment_handle_unique unique (environment_id, handle),
        constraint subscription_customer_fk foreign key (environment_id, customer_id)
          references customer (environment_id, id),
        constraint subscription_term_check check (term_start >= start_date and term_end > term_start),
        constraint subscription_renewal_check
          check ((term_end is null) = (renewal_unit is null) and (renewal_unit is null) = (renewal_count is null)),
        constraint subscription_auto_renewal_check check (not auto_renewal or term_end is not null),
        constraint subscription_cancelled_check check (status <> 'cancelled' or cancelled_at is not null)
      );
      create index subscription_customer_index on subscription (environment_id, customer_id, id);

      create table subscription_item (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        subscription_id uuid not null,
        product_id uuid not null,
        price_id uuid not null,
        quantity numeric(21, 6) not null check (quantity >= 0),
        -- A quantity change that applies from next_quantity_from, a period boundary still ahead.
        next_quantity numeric(21, 6) check (next_quantity >= 0),
        next_quantity_from date,
        -- How the price bills, as it was when the item was added: periods already billed keep their meaning.
        term_unit text not null check (term_unit in ('day', 'week', 'month', 'year')),
        term_count integer not null check (term_count between 1 and 10000),
        purchase text not null check (purchase in ('one_time', 'recurring')),
        method text not null check (method in ('advance', 'arrears', 'event_based')),
        starts_on date not null,
        ends_on date,
        -- The period the next bill covers, and when that bill is due (null: nothing left to bill).
        period_index integer not null check (period_index >= 0),
        bill_at timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz,
        constraint subscription_item_environment_id_unique unique (environment_id, id),
        constraint subscription_item_subscription_fk foreign key (environment_id, subscription_id)
          references subscription (environment_id, id),
        constraint subscription_item_product_fk foreign key (environment_id, product_id)
          references product (environment_id, id),
        constraint subscription_item_price_fk foreign key (environment_id, price_id)
          references price (environment_id, id),
        constraint subscription_item_next_quantity_pair_check
          check ((next_quantity is null) = (next_quantity_from is null)),
        constraint subscription_item_ends_check check (ends_on >= starts_on)
      );
      create index subscription_item_subscription_index on subscription_item (environment_id, subscription_id, id);
      create index subscription_item_due_index on subscription_item (environment_id, bill_at)
        where bill_at is not null;

      create table usage_record (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        subscription_item_id uuid not null,
        quantity numeric(21, 6) not null check (quantity > 0),
        occurred_at timestamptz not null,
        idempotency_key varchar(255) not null,
        created_at timestamptz not null,
        constraint usage_record_environment_item_key_unique
          unique (environment_id, subscription_item_id, idempotency_key),
        constraint usage_record_item_fk foreign key (environment_id, subscription_item_id)
          references subscription_item (environment_id, id)
      );
      create index usage_record_item_time_index on usage_record (environment_id, subscription_item_id, occurred_at);

      create table billing_run (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        as_of timestamptz not null,
        triggered_by text not null check (triggered_by in ('api', 'schedule')),
        status text not null check (status in ('running', 'succeeded', 'failed', 'interrupted')),
        started_at timestamptz not null,
        finished_at timestamptz,
        invoice_count integer not null check (invoice_count >= 0),
        period_count integer not null check (period_count >= 0),
        renewal_count integer not null check (renewal_count >= 0),
        ended_count integer not null check (ended_count >= 0),
        invoice_ids uuid[] not null,
        errors jsonb not null,
        constraint billing_run_environment_id_unique unique (environment_id, id),
        constraint billing_run_finished_check check ((status = 'running') = (finished_at is null))
      );
      create index billing_run_running_index on billing_run (environment_id) where status = 'running';

      -- The ledger of what was billed. Its unique key is what makes billing exactly-once: a row is
      -- written in the transaction that creates the invoice line, so a period billed twice would
      -- violate it, whatever crashed or ran concurrently.
      create table billed_period (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        subscription_item_id uuid not null,
        period_start date not null,
        period_end date not null,
        quantity numeric(21, 6) not null,
        amount bigint not null,
        billing_run_id uuid not null,
        -- Null when nothing was invoiced (no usage), or when the draft invoice was deleted afterwards.
        invoice_id uuid references invoice (id) on delete set null,
        created_at timestamptz not null,
        constraint billed_period_once unique (environment_id, subscription_item_id, period_start),
        constraint billed_period_item_fk foreign key (environment_id, subscription_item_id)
          references subscription_item (environment_id, id),
        constraint billed_period_run_fk foreign key (environment_id, billing_run_id)
          references billing_run (environment_id, id),
        constraint billed_period_period_check check (period_start < period_end)
      );
      create index billed_period_run_index on billed_period (environment_id, billing_run_id);
    `);
  }

  override down(): void {
    this.addSql(`
      drop table billed_period; drop table billing_run; drop table usage_record;
      drop table subscription_item; drop table subscription;
      alter table product drop constraint product_environment_id_unique;
      alter table customer drop constraint customer_environment_id_unique;
    `);
  }
}
