import { Migration } from '@mikro-orm/migrations';

/**
 * What lets a request skip two database writes:
 * - a notification on `api_token_changed` whenever a token is revoked, deleted or its secret, scope or
 *   environments change, so that every process's token cache (src/auth/token-cache.ts) forgets it at once
 *   (the once-a-minute `last_used_at` update notifies nothing);
 * - `rate_limit_reserve`, which takes a block of a token's request budget in one statement, so that a
 *   process can admit the block's requests without a write each (src/limits/rate-limit.ts), and
 *   `rate_limit_release`, which gives back what a process did not use.
 */
export class Migration20261125170000RequestPath extends Migration {
  override up(): void {
    this.addSql(`
      create function api_token_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify('api_token_changed', old.id::text);
        return null;
      end $$;
      create trigger api_token_changed after update on api_token for each row
        when (old.revoked_at is distinct from new.revoked_at or old.secret_hash is distinct from new.secret_hash
          or old.scope is distinct from new.scope or old.environment_ids is distinct from new.environment_ids)
        execute function api_token_changed();
      create trigger api_token_deleted after delete on api_token for each row execute function api_token_changed();

      -- Takes up to p_want requests of the token's window (opening a new window when the last one has
      -- passed), after giving back p_unused of the caller's previous block; a refused request (nothing
      -- granted) still counts one, as a single request always did.
      create function rate_limit_reserve(p_token uuid, p_want integer, p_max integer, p_window_seconds integer,
        p_unused integer, p_unused_window_start text)
      returns table (granted integer, window_start text, ms_left double precision) language plpgsql as $$
      declare
        counter rate_limit_counter%rowtype;
        taken integer;
      begin
        insert into rate_limit_counter (token_id, window_start, request_count) values (p_token, now(), 0)
          on conflict (token_id) do nothing;
        select * into counter from rate_limit_counter where token_id = p_token for update;
        -- What the caller's previous block of this window left unused goes back first.
        if p_unused > 0 and counter.window_start = p_unused_window_start::timestamptz then
          counter.request_count := greatest(0, counter.request_count - p_unused);
        end if;
        if counter.window_start <= now() - make_interval(secs => p_window_seconds) then
          counter.window_start := now();
          counter.request_count := 0;
        end if;
        taken := greatest(0, least(p_want, p_max - counter.request_count));
        update rate_limit_counter
          set window_start = counter.window_start, request_count = counter.request_count + greatest(taken, 1)
          where token_id = p_token;
        return query select taken, counter.window_start::text,
          extract(epoch from counter.window_start + make_interval(secs => p_window_seconds) - now())::float8 * 1000;
      end $$;

      -- Gives back requests reserved and not used, if their window is still the token's.
      create function rate_limit_release(p_token uuid, p_unused integer, p_window_start text) returns void
      language sql as $$
        update rate_limit_counter set request_count = greatest(0, request_count - p_unused)
        where token_id = p_token and window_start = p_window_start::timestamptz;
      $$;
    `);
  }

  override down(): void {
    this.addSql(`
      drop function rate_limit_release(uuid, integer, text);
      drop function rate_limit_reserve(uuid, integer, integer, integer, integer, text);
      drop trigger api_token_deleted on api_token;
      drop trigger api_token_changed on api_token;
      drop function api_token_changed();
    `);
  }
}
