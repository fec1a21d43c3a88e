import { Migration } from '@mikro-orm/migrations';

export class Migration20261121000000Foundation extends Migration {
  override up(): void {
    this.addSql(`
      create table environment (
        id uuid primary key,
        name varchar(200) not null,
        created_at timestamptz not null
      );

      create table api_token (
        id uuid primary key,
        name varchar(200),
        prefix varchar(16) not null,
        secret_hash varchar(64) not null unique,
        environment_ids uuid[] not null,
        created_at timestamptz not null,
        last_used_at timestamptz,
        revoked_at timestamptz
      );

      create table customer (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        name varchar(250) not null,
        company_name varchar(250),
        handle varchar(250),
        email varchar(320),
        currency varchar(3),
        payment_term varchar(20),
        collection_mode text not null default 'send_invoice'
          check (collection_mode in ('automatic', 'send_invoice', 'draft_invoice')),
        billing_address jsonb not null default '{}',
        created_at timestamptz not null,
        updated_at timestamptz,
        constraint customer_environment_handle_unique unique (environment_id, handle)
      );
      create index customer_environment_id_index on customer (environment_id, id);
    `);
  }

  override down(): void {
    this.addSql('drop table customer; drop table api_token; drop table environment;');
  }
}
