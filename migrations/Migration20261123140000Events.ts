import { Migration } from '@mikro-orm/migrations';

/**
 * Events: what happened to an environment's objects, written in the same transaction as the change
 * (a transactional outbox), read through GraphQL and delivered to webhook endpoints.
 */
export class Migration20261123140000Events extends Migration {
  override up(): void {
    this.addSql(`
      create table event (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        type varchar(60) not null,
        object_type varchar(40) not null,
        object_id uuid not null,
        data jsonb not null,
        created_at timestamptz not null
      );
      create index event_environment_id_index on event (environment_id, id);
      create index event_object_index on event (environment_id, object_id, id);
      create index event_type_index on event (environment_id, type, id);
      create index event_created_at_index on event (created_at);
      select enable_tenant_isolation('event');
    `);
  }

  override down(): void {
    this.addSql('drop table event;');
  }
}
