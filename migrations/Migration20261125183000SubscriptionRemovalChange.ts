import { Migration } from '@mikro-orm/migrations';

/**
 * An item's removal (or its subscription's cancellation) is a scheduled change too: `removes` marks
 * the change that ends the item from `applies_from` on, which can be cancelled like the others until
 * that day has come.
 */
export class Migration20261125183000SubscriptionRemovalChange extends Migration {
  override up(): void {
    this.addSql(`
      alter table subscription_change add column removes boolean not null default false;
      alter table subscription_change drop constraint subscription_change_check;
      alter table subscription_change add constraint subscription_change_check
        check (removes or quantity is not null or price_id is not null);
    `);
  }

  override down(): void {
    this.addSql(`
      delete from subscription_change where removes;
      alter table subscription_change drop constraint subscription_change_check;
      alter table subscription_change add constraint subscription_change_check
        check (quantity is not null or price_id is not null);
      alter table subscription_change drop column removes;
    `);
  }
}
