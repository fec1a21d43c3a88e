import { Migration } from '@mikro-orm/migrations';

/**
 * The billed periods released by the deletion of their draft (no invoice, not zero): a billing run
 * looks for them for every customer it passes (customersWithWork, the batch's due work). They are
 * rare, so a partial index of them stays small; without it each look read every billed period of the
 * customer's items, a list that grows with every bill.
 */
export class Migration20261126100000BillingWorkIndexes extends Migration {
  override up(): void {
    this.addSql(`
      create index billed_period_released_index on billed_period (environment_id, subscription_item_id)
        where invoice_id is null and quantity <> 0;
    `);
  }

  override down(): void {
    this.addSql('drop index billed_period_released_index;');
  }
}
