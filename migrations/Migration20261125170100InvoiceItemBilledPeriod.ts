import { Migration } from '@mikro-orm/migrations';

/**
 * A billing run's invoice line names what it charges: the billed period (`billed_period_id`) or the
 * proration line (`proration_line_id`). Removing such a line from a draft releases exactly that period
 * (or proration line) for the next run, as deleting the whole draft does. The billed period's row is
 * written after its invoice lines in the same transaction, hence the deferred check.
 */
export class Migration20261125170100InvoiceItemBilledPeriod extends Migration {
  override up(): void {
    this.addSql(`
      alter table invoice_item add column billed_period_id uuid
        references billed_period (id) deferrable initially deferred;
      alter table invoice_item add column proration_line_id uuid
        references proration_line (id) on delete set null;
      create index invoice_item_billed_period_index on invoice_item (environment_id, billed_period_id)
        where billed_period_id is not null;
    `);
  }

  override down(): void {
    this.addSql(`
      alter table invoice_item drop column proration_line_id;
      alter table invoice_item drop column billed_period_id;
    `);
  }
}
