import { Migration } from '@mikro-orm/migrations';

/**
 * Void and uncollectible invoices, and settlement reversals. The contract's `status` stays
 * `draft | booked`; what happens to a booked invoice's money afterwards lives in these columns.
 * A reversal names the settlement it reverses; the unique index lets a settlement be reversed once,
 * whatever two requests race.
 */
export class Migration20261123120000InvoiceVoids extends Migration {
  override up(): void {
    this.addSql(`
      alter table invoice
        add column voided_at timestamptz,
        add column uncollectible_at timestamptz;
      alter table settlement
        add column reverses_settlement_id uuid references settlement (id);
      create unique index settlement_reverses_unique on settlement (reverses_settlement_id);
    `);
  }

  override down(): void {
    this.addSql(`
      drop index settlement_reverses_unique;
      alter table settlement drop column reverses_settlement_id;
      alter table invoice drop column voided_at, drop column uncollectible_at;
    `);
  }
}
