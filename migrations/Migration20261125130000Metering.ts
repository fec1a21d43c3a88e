import { Migration } from '@mikro-orm/migrations';

/**
 * Metering: billable metrics, the raw usage events they aggregate, which subscription items bill a
 * metric, each environment's rules for late events (adjust on the next invoice or reject, and a grace
 * period before arrears usage is billed), and the adjustments late events leave for the next invoice.
 *
 * `usage_event` is partitioned by month on `timestamp` (declarative RANGE partitioning), so an
 * aggregation over one period reads only that period's partitions and an old month can be detached.
 * PostgreSQL wants the partition key in every unique index of a partitioned table, so the
 * idempotency of `transaction_id` (unique per environment for ever) lives in the small
 * `usage_event_key` table, written with `insert ... on conflict do nothing returning` before the
 * events themselves.
 *
 * Partitions are made by `usage_event_partition(month)`, a SECURITY DEFINER function the application
 * role may call (it owns no table, so cannot create one itself): the partition-ahead job calls it for
 * the coming months, ingestion for a month that has none yet. Each partition gets the tenant policy
 * too and no privileges for the application role: it is reached only through `usage_event`.
 */
export class Migration20261125130000Metering extends Migration {
  override up(): void {
    this.addSql(`
      create table billable_metric (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        code varchar(100) not null,
        name varchar(250) not null,
        aggregation text not null
          check (aggregation in ('count', 'sum', 'max', 'unique_count', 'latest', 'weighted_sum')),
        field_name varchar(100),
        filters jsonb not null default '{}',
        rounding text not null default 'none' check (rounding in ('none', 'round', 'ceil', 'floor')),
        rounding_decimals integer not null default 0 check (rounding_decimals between 0 and 6),
        created_at timestamptz not null,
        updated_at timestamptz,
        constraint billable_metric_environment_code_unique unique (environment_id, code),
        constraint billable_metric_field_check check (aggregation = 'count' or field_name is not null)
      );
      select enable_tenant_isolation('billable_metric');

      alter table subscription_item add column billable_metric_id uuid references billable_metric (id);

      create table usage_event_key (
        environment_id uuid not null references environment (id),
        transaction_id varchar(255) not null,
        created_at timestamptz not null default now(),
        primary key (environment_id, transaction_id)
      );
      select enable_tenant_isolation('usage_event_key');

      create table usage_event (
        environment_id uuid not null,
        id uuid not null,
        transaction_id varchar(255) not null,
        customer_id uuid not null,
        metric_id uuid not null,
        timestamp timestamptz not null,
        value numeric,
        properties jsonb not null default '{}',
        created_at timestamptz not null default now()
      ) partition by range (timestamp);
      create index usage_event_lookup_index on usage_event (environment_id, metric_id, customer_id, timestamp);
      select enable_tenant_isolation('usage_event');

      create table metering_settings (
        id uuid primary key,
        environment_id uuid not null unique references environment (id),
        late_events text not null check (late_events in ('adjust_next', 'reject')),
        grace_period_hours integer not null check (grace_period_hours between 0 and 720),
        updated_at timestamptz
      );
      select enable_tenant_isolation('metering_settings');

      create table usage_adjustment (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        subscription_item_id uuid not null references subscription_item (id),
        period_start date not null,
        period_end date not null,
        invoice_id uuid references invoice (id),
        quantity numeric(21, 6),
        amount bigint,
        created_at timestamptz not null,
        billed_at timestamptz
      );
      create unique index usage_adjustment_pending_unique on usage_adjustment (subscription_item_id, period_start)
        where billed_at is null;
      create index usage_adjustment_item_index on usage_adjustment (environment_id, subscription_item_id, period_start);
      select enable_tenant_isolation('usage_adjustment');

      create function usage_event_partition(month date) returns text
      language plpgsql security definer set search_path = public, pg_temp as $fn$
      declare
        first date := date_trunc('month', month)::date;
        partition text := format('usage_event_%s', to_char(first, 'YYYY_MM'));
      begin
        if to_regclass(partition) is not null then
          return partition;
        end if;
        -- Two callers making the same month: the second waits for the first, whose partition it then
        -- meets as a duplicate (its catalog snapshot may predate the first's commit).
        perform pg_advisory_xact_lock(hashtext('usage_event_partition'));
        begin
          execute format(
            'create table %I partition of usage_event for values from (%L) to (%L)',
            partition,
            first::timestamp at time zone 'UTC',
            (first + interval '1 month')::timestamp at time zone 'UTC');
        exception when duplicate_table then
          return partition;
        end;
        perform enable_tenant_isolation(partition::regclass);
        execute format('revoke all on %I from billing_app', partition);
        return partition;
      end
      $fn$;
      revoke all on function usage_event_partition(date) from public;
      grant execute on function usage_event_partition(date) to billing_app;

      select usage_event_partition((date_trunc('month', now()) + make_interval(months => m))::date)
      from generate_series(-1, 3) as m;
    `);
  }

  override down(): void {
    this.addSql(`
      drop function usage_event_partition(date);
      drop table usage_adjustment;
      drop table metering_settings;
      drop table usage_event;
      drop table usage_event_key;
      alter table subscription_item drop column billable_metric_id;
      drop table billable_metric;
    `);
  }
}
