import { Migration } from '@mikro-orm/migrations';

/**
 * Trials: `trial_end` is the day a subscription's trial ends and its periods begin (its `start_date`,
 * the anchor of every period, is then the trial end). `renewal_anchor` is the day renewal terms are
 * counted from when that is not the period anchor (the term start of a subscription with a trial or a
 * billing anchor). A `trial` proration line is the zero line that names the trial on the first invoice.
 */
export class Migration20261125170000SubscriptionTrials extends Migration {
  override up(): void {
    this.addSql(`
      alter table subscription add column trial_end date;
      alter table subscription add column renewal_anchor date;
      alter table proration_line drop constraint proration_line_kind_check;
      alter table proration_line add constraint proration_line_kind_check
        check (kind in ('unused', 'remaining', 'trial'));
    `);
  }

  override down(): void {
    this.addSql(`
      delete from proration_line where kind = 'trial';
      alter table proration_line drop constraint proration_line_kind_check;
      alter table proration_line add constraint proration_line_kind_check check (kind in ('unused', 'remaining'));
      alter table subscription drop column renewal_anchor;
      alter table subscription drop column trial_end;
    `);
  }
}
