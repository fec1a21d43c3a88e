import { Migration } from '@mikro-orm/migrations';

/**
 * The contract lets `PATCH /products` carry "a JSON object with arbitrary keys": keys that are no
 * product field are kept here (and read back through GraphQL) instead of being refused.
 */
export class Migration20261125140000ProductMetadata extends Migration {
  override up(): void {
    this.addSql(`alter table product add column metadata jsonb not null default '{}';`);
  }

  override down(): void {
    this.addSql('alter table product drop column metadata;');
  }
}
