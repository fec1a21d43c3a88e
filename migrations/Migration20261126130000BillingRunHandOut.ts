import { Migration } from '@mikro-orm/migrations';

/**
 * A billing run's hand-out of customers, kept on the run's row so that the workers of several processes
 * can bill one run: the last customer handed to a batch (the next batch starts after it; all ones once
 * every customer is handed out), and how many customers were handed out and how many batches have billed
 * (or recorded as failed). A run that ends with fewer billed than handed out lost a batch to a process that
 * stopped: it ends interrupted, and the next run bills those customers.
 */
export class Migration20261126130000BillingRunHandOut extends Migration {
  override up(): void {
    this.addSql(`
      alter table billing_run
        add column handed_out_after uuid not null default '00000000-0000-0000-0000-000000000000',
        add column customers_handed_out integer not null default 0,
        add column customers_done integer not null default 0;
    `);
  }

  override down(): void {
    this.addSql(`
      alter table billing_run drop column handed_out_after, drop column customers_handed_out, drop column customers_done;
    `);
  }
}
