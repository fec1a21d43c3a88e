import { Migration } from '@mikro-orm/migrations';

/**
 * Tax policy (docs/tax.md): how an environment rounds VAT, whether prices and invoice lines include
 * tax, and a customer's tax ids and exemption.
 *
 * Invoices record the rounding and exemption their amounts were computed with. Rows that exist
 * already were computed per line, so they say `line`; new ones default to `document`.
 *
 * The environment table has no environment_id and no tenant policy: the application role reads every
 * row to authenticate. It may now change one column of one row, its request's own environment, which
 * a row-level policy for UPDATE alone enforces (the owner, which creates environments, is not subject
 * to it: the table does not force row-level security).
 */
export class Migration20261123100000TaxPolicy extends Migration {
  override up(): void {
    this.addSql(`
      alter table environment add column tax_rounding text not null default 'document'
        check (tax_rounding in ('document', 'line'));
      alter table environment enable row level security;
      create policy environment_read on environment for select to billing_app using (true);
      create policy environment_own_settings on environment for update to billing_app
        using (id = nullif(current_setting('app.environment_id', true), '')::uuid)
        with check (id = nullif(current_setting('app.environment_id', true), '')::uuid);
      grant update (tax_rounding) on environment to billing_app;

      alter table invoice add column tax_rounding text not null default 'line'
        check (tax_rounding in ('document', 'line'));
      alter table invoice alter column tax_rounding set default 'document';
      alter table invoice add column tax_exempt text not null default 'none'
        check (tax_exempt in ('none', 'exempt', 'reverse_charge'));
      alter table invoice_item add column tax_behavior text not null default 'exclusive'
        check (tax_behavior in ('exclusive', 'inclusive'));
      alter table price add column tax_behavior text not null default 'exclusive'
        check (tax_behavior in ('exclusive', 'inclusive'));
      alter table customer add column tax_ids jsonb not null default '[]';
      alter table customer add column tax_exempt text not null default 'none'
        check (tax_exempt in ('none', 'exempt', 'reverse_charge'));
    `);
  }

  override down(): void {
    this.addSql(`
      alter table customer drop column tax_exempt;
      alter table customer drop column tax_ids;
      alter table price drop column tax_behavior;
      alter table invoice_item drop column tax_behavior;
      alter table invoice drop column tax_exempt;
      alter table invoice drop column tax_rounding;
      revoke update (tax_rounding) on environment from billing_app;
      drop policy environment_own_settings on environment;
      drop policy environment_read on environment;
      alter table environment disable row level security;
      alter table environment drop column tax_rounding;
    `);
  }
}
