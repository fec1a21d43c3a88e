import { Migration } from '@mikro-orm/migrations';

export class Migration20261121000100TaxCodesProducts extends Migration {
  override up(): void {
    this.addSql(`
      create table tax_code (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        code varchar(64) not null,
        rate numeric(7, 4) not null check (rate >= 0 and rate <= 100),
        description varchar(500),
        created_at timestamptz not null,
        updated_at timestamptz,
        constraint tax_code_environment_code_unique unique (environment_id, code)
      );

      create table product (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        name varchar(250) not null,
        handle varchar(250),
        description text,
        tax_code varchar(64),
        created_at timestamptz not null,
        updated_at timestamptz,
        constraint product_environment_handle_unique unique (environment_id, handle),
        constraint product_tax_code_fk foreign key (environment_id, tax_code)
          references tax_code (environment_id, code) on update cascade
      );
      create index product_environment_id_index on product (environment_id, id);
    `);
  }

  override down(): void {
    this.addSql('drop table product; drop table tax_code;');
  }
}
