import { Migration } from '@mikro-orm/migrations';

/**
 * Time zones: an environment's default zone for new customers, a customer's zone, and the zone a
 * subscription's periods are reckoned in (the customer's when it was created). Existing rows keep
 * what they had: every period was a UTC day.
 */
export class Migration20261123130000TimeZones extends Migration {
  override up(): void {
    this.addSql(`
      alter table environment add column timezone text not null default 'UTC';
      alter table customer add column timezone text not null default 'UTC';
      alter table subscription add column timezone text not null default 'UTC';
    `);
  }

  override down(): void {
    this.addSql(`
      alter table subscription drop column timezone;
      alter table customer drop column timezone;
      alter table environment drop column timezone;
    `);
  }
}
