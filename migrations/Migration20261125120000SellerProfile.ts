import { Migration } from '@mikro-orm/migrations';

/**
 * The seller profile: who an environment invoices as (legal name, address, VAT and other
 * registrations, contact, bank account, logo, footer, language), and the seller frozen onto each
 * invoice when it is booked. Logos are rows of their own that never change, so a booked invoice
 * keeps printing the logo it was booked with while its snapshot stays small.
 */
export class Migration20261125120000SellerProfile extends Migration {
  override up(): void {
    this.addSql(`
      create table seller_logo (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        media_type text not null check (media_type in ('image/png', 'image/jpeg')),
        data text not null,
        byte_size integer not null check (byte_size between 1 and 262144),
        created_at timestamptz not null
      );
      create index seller_logo_environment_id_index on seller_logo (environment_id, id);
      select enable_tenant_isolation('seller_logo');

      create table seller_profile (
        id uuid primary key,
        environment_id uuid not null unique references environment (id),
        legal_name varchar(250),
        address jsonb,
        vat_id varchar(40),
        tax_number varchar(40),
        company_id varchar(100),
        email varchar(320),
        phone varchar(40),
        iban varchar(34),
        bic varchar(11),
        payment_instructions varchar(1000),
        footer varchar(1000),
        language text not null default 'en' check (language in ('en', 'de', 'fr')),
        logo_id uuid references seller_logo (id),
        updated_at timestamptz
      );
      select enable_tenant_isolation('seller_profile');

      alter table invoice add column seller_snapshot jsonb;
    `);
  }

  override down(): void {
    this.addSql(
      'alter table invoice drop column seller_snapshot; drop table seller_profile; drop table seller_logo;',
    );
  }
}
