import { Migration } from '@mikro-orm/migrations';

/**
 * Jobs added in the writing transaction. The application role may not touch the queue's schema
 * (graphile_worker, migrated by migrate() before these migrations); `enqueue_job` adds one job as
 * the owner, so a job exists if and only if the change that asked for it commits. Every event added
 * asks for `event-published`, which hands it to the modules that listen for its type (webhooks,
 * e-mail): no write path can record an event and forget to deliver it.
 */
export class Migration20261124000000JobQueue extends Migration {
  override up(): void {
    this.addSql(`
      create function enqueue_job(
        p_task text,
        p_payload json,
        p_job_key text default null,
        p_run_at timestamptz default null,
        p_max_attempts integer default null
      ) returns void language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
      begin
        perform graphile_worker.add_job(
          p_task, p_payload, run_at => p_run_at, max_attempts => p_max_attempts, job_key => p_job_key
        );
      end
      $$;
      revoke all on function enqueue_job(text, json, text, timestamptz, integer) from public;
      grant execute on function enqueue_job(text, json, text, timestamptz, integer) to billing_app;

      create function event_published() returns trigger language plpgsql security definer
      set search_path = pg_catalog, pg_temp as $$
      begin
        perform graphile_worker.add_job(
          'event-published',
          json_build_object('eventId', new.id, 'environmentId', new.environment_id, 'type', new.type)
        );
        return null;
      end
      $$;
      revoke all on function event_published() from public;
      create trigger event_published after insert on event for each row execute function event_published();
    `);
  }

  override down(): void {
    this.addSql(`
      drop trigger event_published on event;
      drop function event_published();
      drop function enqueue_job(text, json, text, timestamptz, integer);
    `);
  }
}
