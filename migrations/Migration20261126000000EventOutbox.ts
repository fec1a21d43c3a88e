import { Migration } from '@mikro-orm/migrations';

/**
 * Events reach their listeners through an outbox instead of one `event-published` job each. The
 * event's insert writes a row (its id, environment and type) to `event_relay.outbox` in the same
 * transaction, so the row exists if and only if the change commits; the job worker's relay
 * (src/modules/event/event.relay.ts) takes the rows in batches, adds each wanted listener's job and
 * deletes the rows in one transaction. A graphile-worker job per event cost the writer an `add_job`
 * and the worker a get, a run and a complete, even for events nobody listens to.
 *
 * The outbox is the owner's alone: its schema grants the application role nothing (not even usage;
 * the default privileges of `public` do not reach it), and row-level security without a policy
 * refuses any other role a row. One statement-level trigger per insert, so a multi-row insert of
 * events writes its outbox rows in one statement too.
 *
 * `down()` restores the `event-published` trigger and queues an `event-published` job for every row
 * still waiting, so nothing waiting is lost.
 */
export class Migration20261126000000EventOutbox extends Migration {
  override up(): void {
    this.addSql(`
      create schema event_relay;
      revoke all on schema event_relay from public;
      create table event_relay.outbox (
        event_id uuid primary key,
        environment_id uuid not null,
        type text not null
      );
      alter table event_relay.outbox enable row level security;
      revoke all on event_relay.outbox from public;

      drop trigger event_published on event;
      drop function event_published();
      create function event_outboxed() returns trigger language plpgsql security definer
      set search_path = pg_catalog, pg_temp as $$
      begin
        insert into event_relay.outbox (event_id, environment_id, type)
        select id, environment_id, type from inserted;
        return null;
      end
      $$;
      revoke all on function event_outboxed() from public;
      create trigger event_outboxed after insert on event referencing new table as inserted
        for each statement execute function event_outboxed();
    `);
  }

  override down(): void {
    this.addSql(`
      drop trigger event_outboxed on event;
      drop function event_outboxed();
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
      select graphile_worker.add_job(
        'event-published',
        json_build_object('eventId', event_id, 'environmentId', environment_id, 'type', type)
      ) from (select * from event_relay.outbox order by event_id) waiting;
      drop schema event_relay cascade;
    `);
  }
}
