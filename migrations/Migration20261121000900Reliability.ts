import { Migration } from '@mikro-orm/migrations';

export class Migration20261121000900Reliability extends Migration {
  override up(): void {
    this.addSql(`
      -- Only completed requests are stored: a request still running is detected through an advisory lock
      -- on the same key, so a crash mid-request leaves nothing behind to clean up.
      create table idempotency_key (
        environment_id uuid not null references environment (id),
        token_id uuid not null references api_token (id),
        key varchar(255) not null,
        fingerprint char(64) not null,
        response_status smallint not null,
        response_headers jsonb not null,
        response_body text,
        created_at timestamptz not null default now(),
        primary key (environment_id, token_id, key)
      );
      create index idempotency_key_created_at_index on idempotency_key (created_at);

      -- One row per token: a window opens with the token's first request and closes window_seconds later.
      create table rate_limit_counter (
        token_id uuid primary key references api_token (id),
        window_start timestamptz not null,
        request_count integer not null
      );

      create table audit_event (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        token_id uuid references api_token (id),
        operation varchar(200),
        action varchar(10) not null check (action in ('create', 'update', 'delete')),
        object_type varchar(100) not null,
        object_id varchar(100) not null,
        changed_fields text[] not null,
        occurred_at timestamptz not null
      );
      create index audit_event_environment_id_index on audit_event (environment_id, id);
      create index audit_event_object_index on audit_event (environment_id, object_id, id);
    `);
  }

  override down(): void {
    this.addSql('drop table audit_event; drop table rate_limit_counter; drop table idempotency_key;');
  }
}
