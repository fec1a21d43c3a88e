import { Migration } from '@mikro-orm/migrations';

/**
 * One row per API token: the query cost it has spent and not yet earned back (a leaky bucket; see
 * src/limits/cost-budget.ts). Like the request rate limit's counter it carries no environment: the
 * token is the unit.
 */
export class Migration20261123090000QueryCostBudget extends Migration {
  override up(): void {
    this.addSql(`
      create table query_cost_budget (
        token_id uuid primary key references api_token (id),
        level double precision not null check (level >= 0),
        updated_at timestamptz not null
      );
      grant select, insert, update on query_cost_budget to billing_app;
    `);
  }

  override down(): void {
    this.addSql('drop table query_cost_budget;');
  }
}
