import { Migration } from '@mikro-orm/migrations';

/**
 * Row-level security on the subscription tables, for databases that ran the tenant isolation migration
 * before the subscriptions one. On a new database Migration20261121003000Subscriptions runs first and
 * the isolation migration covers its tables; but a database already migrated past
 * Migration20261121009000TenantIsolation gets the subscription tables later, and without this they
 * would carry no policy while the application role's default privileges let it read every row.
 * enable_tenant_isolation replaces the policy, so running it on tables that have one changes nothing.
 */
export class Migration20261121009100SubscriptionsTenantIsolation extends Migration {
  override up(): void {
    this.addSql(`
      select enable_tenant_isolation('subscription');
      select enable_tenant_isolation('subscription_item');
      select enable_tenant_isolation('usage_record');
      select enable_tenant_isolation('billing_run');
      select enable_tenant_isolation('billed_period');
    `);
  }

  override down(): void {
    // The tables keep their isolation: it is the tenant isolation migration's to undo.
  }
}
