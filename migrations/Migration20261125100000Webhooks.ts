import { Migration } from '@mikro-orm/migrations';

/**
 * Webhooks: each environment's endpoints, one delivery per event and endpoint (the unique index makes
 * the fan-out of a retried job add none twice), and every HTTP attempt of a delivery.
 */
export class Migration20261125100000Webhooks extends Migration {
  override up(): void {
    this.addSql(`
      create table webhook_endpoint (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        url text not null check (length(url) <= 2000),
        description varchar(500),
        event_types text[] not null default '{}',
        secret text not null,
        status text not null default 'enabled' check (status in ('enabled', 'disabled')),
        disabled_reason text check (disabled_reason in ('manual', 'failing')),
        failing_since timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index webhook_endpoint_environment_id_index on webhook_endpoint (environment_id, id);
      select enable_tenant_isolation('webhook_endpoint');

      create table webhook_delivery (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        endpoint_id uuid not null references webhook_endpoint (id) on delete cascade,
        event_id uuid,
        event_type varchar(60) not null,
        payload jsonb,
        resend_of uuid references webhook_delivery (id),
        status text not null check (status in ('pending', 'succeeded', 'failed')),
        attempts integer not null default 0,
        next_attempt_at timestamptz,
        attempt_started_at timestamptz,
        created_at timestamptz not null,
        finished_at timestamptz
      );
      create unique index webhook_delivery_event_unique on webhook_delivery (endpoint_id, event_id)
        where resend_of is null and event_id is not null;
      create index webhook_delivery_endpoint_index on webhook_delivery (environment_id, endpoint_id, id);
      create index webhook_delivery_pending_index on webhook_delivery (next_attempt_at) where status = 'pending';
      select enable_tenant_isolation('webhook_delivery');

      create table webhook_delivery_attempt (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        delivery_id uuid not null references webhook_delivery (id) on delete cascade,
        number integer not null,
        started_at timestamptz not null,
        duration_ms integer not null,
        status_code integer,
        response_body text,
        error text
      );
      create index webhook_delivery_attempt_delivery_index
        on webhook_delivery_attempt (environment_id, delivery_id, number);
      select enable_tenant_isolation('webhook_delivery_attempt');
    `);
  }

  override down(): void {
    this.addSql(
      'drop table webhook_delivery_attempt; drop table webhook_delivery; drop table webhook_endpoint;',
    );
  }
}
