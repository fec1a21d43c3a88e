import { Migration } from '@mikro-orm/migrations';

/**
 * Usage thresholds: on a metered subscription item, a quantity or an amount (minor units) whose
 * reaching in a period emits `usage_threshold.crossed`, once per threshold and period. The once is
 * the primary key of `usage_threshold_crossing` (threshold, period start), written by ingestion in the
 * transaction that stores the events which reached it.
 */
export class Migration20261125150000MeteringThresholds extends Migration {
  override up(): void {
    this.addSql(`
      create table usage_threshold (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        subscription_item_id uuid not null references subscription_item (id),
        kind text not null check (kind in ('usage', 'amount')),
        value numeric(21, 6) not null check (value > 0),
        created_at timestamptz not null
      );
      create index usage_threshold_item_index on usage_threshold (environment_id, subscription_item_id);
      select enable_tenant_isolation('usage_threshold');

      create table usage_threshold_crossing (
        environment_id uuid not null references environment (id),
        threshold_id uuid not null references usage_threshold (id),
        period_start date not null,
        period_end date not null,
        quantity numeric(21, 6) not null,
        amount bigint not null,
        crossed_at timestamptz not null default now(),
        primary key (threshold_id, period_start)
      );
      select enable_tenant_isolation('usage_threshold_crossing');
    `);
  }

  override down(): void {
    this.addSql(`
      drop table usage_threshold_crossing;
      drop table usage_threshold;
    `);
  }
}
