import { Migration } from '@mikro-orm/migrations';

/**
 * Numbering series: a number pattern per environment and invoice type (tokens {YYYY}, {YY}, {MM},
 * {SEQ:n}) and an optional yearly reset. The row with period_key '' holds the configuration and the
 * continuous counter, as before; with a yearly reset each year of invoice dates counts in a row of its
 * own (period_key '2026'), so an invoice dated in an earlier year still takes that year's next number.
 * A null pattern keeps today's format, prefix followed by six digits, so nothing changes for
 * existing environments.
 */
export class Migration20261125160000NumberingSeries extends Migration {
  override up(): void {
    this.addSql(`
      alter table invoice_numbering
        add column period_key varchar(4) not null default '' check (period_key = '' or period_key ~ '^[0-9]{4}$'),
        add column pattern varchar(60),
        add column yearly_reset boolean not null default false;
      alter table invoice_numbering drop constraint invoice_numbering_pkey;
      alter table invoice_numbering add primary key (environment_id, type, period_key);
    `);
  }

  override down(): void {
    this.addSql(`
      delete from invoice_numbering where period_key <> '';
      alter table invoice_numbering drop constraint invoice_numbering_pkey;
      alter table invoice_numbering add primary key (environment_id, type);
      alter table invoice_numbering drop column yearly_reset, drop column pattern, drop column period_key;
    `);
  }
}
