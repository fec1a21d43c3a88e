import { Migration } from '@mikro-orm/migrations';

/** When the `invoice.overdue` event of an invoice was written: each invoice tells of being overdue once. */
export class Migration20261123150000OverdueEvents extends Migration {
  override up(): void {
    this.addSql('alter table invoice add column overdue_event_at timestamptz;');
  }

  override down(): void {
    this.addSql('alter table invoice drop column overdue_event_at;');
  }
}
