import { Migration } from '@mikro-orm/migrations';

/**
 * Prices, ledger accounts and account sets, plus the listing index tax codes lacked. Each new table
 * is unique on (environment_id, id): that index serves keyset pagination inside an environment and
 * is what composite foreign keys point at, so a row can only reference rows of its own environment.
 */
export class Migration20261121001000Catalog extends Migration {
  override up(): void {
    this.addSql(`
      create table price (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        name varchar(250) not null,
        description varchar(4000),
        term_unit text not null check (term_unit in ('day', 'week', 'month', 'year')),
        term_count integer not null check (term_count between 1 and 10000),
        purchase text not null check (purchase in ('one_time', 'recurring')),
        price_model text not null check (price_model in ('fee', 'volume', 'graduated', 'package')),
        method text not null check (method in ('advance', 'arrears', 'event_based')),
        pricing jsonb not null default '{}' check (jsonb_typeof(pricing) = 'object'),
        created_at timestamptz not null,
        updated_at timestamptz,
        constraint price_environment_id_unique unique (environment_id, id)
      );

      create table ledger_account (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        name varchar(250) not null,
        accounting_code varchar(64) not null,
        barred boolean not null default false,
        created_at timestamptz not null,
        updated_at timestamptz,
        constraint ledger_account_environment_id_unique unique (environment_id, id),
        constraint ledger_account_environment_accounting_code_unique unique (environment_id, accounting_code)
      );

      create table account_set (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        name varchar(250),
        sales_account_id uuid not null,
        income_account_id uuid not null,
        tax_account_id uuid not null,
        deferral_account_id uuid not null,
        recognition_strategy text not null default 'none'
          check (recognition_strategy in ('none', 'even_distribution', 'exact_daily_accrual', 'daily_accrual')),
        created_at timestamptz not null,
        constraint account_set_environment_id_unique unique (environment_id, id),
        constraint account_set_sales_account_fk foreign key (environment_id, sales_account_id)
          references ledger_account (environment_id, id),
        constraint account_set_income_account_fk foreign key (environment_id, income_account_id)
          references ledger_account (environment_id, id),
        constraint account_set_tax_account_fk foreign key (environment_id, tax_account_id)
          references ledger_account (environment_id, id),
        constraint account_set_deferral_account_fk foreign key (environment_id, deferral_account_id)
          references ledger_account (environment_id, id)
      );

      create index tax_code_environment_id_index on tax_code (environment_id, id);
    `);
  }

  override down(): void {
    this.addSql(
      'drop index tax_code_environment_id_index; drop table account_set; drop table ledger_account; drop table price;',
    );
  }
}
