import { Migration } from '@mikro-orm/migrations';

/**
 * Live events: every event added notifies the `billing_event` channel with its id, environment and
 * type. PostgreSQL delivers a notification when its transaction commits and never for one rolled back,
 * so a server process listening on the channel streams exactly the committed events to its GraphQL
 * subscribers, whichever process wrote them.
 */
export class Migration20261124150000LiveEvents extends Migration {
  override up(): void {
    this.addSql(`
      create function event_notify() returns trigger language plpgsql as $$
      begin
        perform pg_notify(
          'billing_event',
          json_build_object('eventId', new.id, 'environmentId', new.environment_id, 'type', new.type)::text
        );
        return null;
      end
      $$;
      create trigger event_notify after insert on event for each row execute function event_notify();
    `);
  }

  override down(): void {
    this.addSql('drop trigger event_notify on event; drop function event_notify();');
  }
}
