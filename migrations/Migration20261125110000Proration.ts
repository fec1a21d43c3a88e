import { Migration } from '@mikro-orm/migrations';

/**
 * Proration and scheduled changes. A subscription item's changes (quantity, price) become rows of
 * `subscription_change`, several of which may wait at once and apply in date order (the single
 * next_quantity pair could hold only one). A billing anchor may lie after the term start. `proration_line` holds the prorated charges and credits a
 * mid-period change makes until an invoice takes them (the next billing run's, or one of its own).
 */
export class Migration20261125110000Proration extends Migration {
  override up(): void {
    this.addSql(`
      create table subscription_change (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        subscription_id uuid not null references subscription (id),
        subscription_item_id uuid not null references subscription_item (id),
        -- The local day the change is made on, and the period boundary from which whole periods bill it.
        effective_on date not null,
        applies_from date not null,
        quantity numeric(21, 6) check (quantity >= 0),
        price_id uuid references price (id),
        proration text not null check (proration in ('create', 'none', 'invoice_now')),
        status text not null check (status in ('scheduled', 'cancelled')),
        created_at timestamptz not null,
        cancelled_at timestamptz,
        check (quantity is not null or price_id is not null)
      );
      create index subscription_change_item_index on subscription_change (environment_id, subscription_item_id, id);
      create index subscription_change_subscription_index on subscription_change (environment_id, subscription_id, id);

      -- The owner reads every environment's items while moving their waiting quantity changes.
      alter table subscription_item no force row level security;
      insert into subscription_change (id, environment_id, subscription_id, subscription_item_id, effective_on,
        applies_from, quantity, price_id, proration, status, created_at)
      -- Ids that sort before every UUIDv7: changes apply in id order, and these came first.
      select ('00000000-0000-4000-8000-' || lpad(to_hex(row_number() over (order by id)), 12, '0'))::uuid,
        environment_id, subscription_id, id,
        -- When it was made is not known; the item's last change is the best guess.
        least(coalesce(updated_at, created_at)::date, next_quantity_from), next_quantity_from,
        next_quantity, null, 'none', 'scheduled', now()
      from subscription_item where next_quantity is not null;
      alter table subscription_item force row level security;
      select enable_tenant_isolation('subscription_change');
      alter table subscription_item drop constraint subscription_item_next_quantity_pair_check;
      alter table subscription_item drop column next_quantity, drop column next_quantity_from;

      create table proration_line (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        customer_id uuid not null references customer (id),
        subscription_id uuid not null references subscription (id),
        subscription_item_id uuid not null references subscription_item (id),
        change_id uuid references subscription_change (id),
        kind text not null check (kind in ('unused', 'remaining')),
        currency varchar(3) not null,
        product_id uuid not null references product (id),
        price_id uuid not null references price (id),
        quantity numeric(21, 6) not null,
        amount bigint not null,
        description text not null,
        period_start date not null,
        period_end date not null check (period_end > period_start),
        -- The moment the change takes effect: no billing run before it takes the line.
        bill_from timestamptz not null,
        -- A deleted draft lets go of its lines: the next run takes them again.
        invoice_id uuid references invoice (id) on delete set null,
        created_at timestamptz not null
      );
      create index proration_line_pending_index on proration_line (environment_id, customer_id, bill_from)
        where invoice_id is null;
      create index proration_line_item_index on proration_line (environment_id, subscription_item_id, id);
      select enable_tenant_isolation('proration_line');

      -- A billing anchor after the start: periods are counted from start_date, which is then after term_start.
      alter table subscription drop constraint subscription_term_check;
      alter table subscription add constraint subscription_term_check check (term_end > term_start);

    `);
  }

  override down(): void {
    this.addSql(`
      alter table subscription drop constraint subscription_term_check;
      alter table subscription add constraint subscription_term_check
        check (term_start >= start_date and term_end > term_start);
      drop table proration_line;
      alter table subscription_item add column next_quantity numeric(21, 6) check (next_quantity >= 0),
        add column next_quantity_from date;
      drop table subscription_change;
    `);
  }
}
