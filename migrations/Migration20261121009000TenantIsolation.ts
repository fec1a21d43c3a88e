import { Migration } from '@mikro-orm/migrations';

/**
 * Tenant isolation in the database itself: row-level security on every table with an environment_id,
 * enforced for a role the application switches to, which owns nothing and cannot bypass it.
 *
 * The role `billing_app` is NOLOGIN: the application connects as the DATABASE_URL user (the owner,
 * which runs these migrations) and every pooled connection does `set role billing_app`. Roles belong to
 * the whole PostgreSQL cluster, so an existing `billing_app` is reused. Creating it needs superuser or
 * CREATEROLE; without either, a DBA creates it beforehand (`create role billing_app nologin` and
 * `grant billing_app to <owner>`), and this migration only checks it.
 *
 * Every request runs in one transaction that first does `set_config('app.environment_id', <id>, true)`;
 * the policy lets a row through only when its environment_id equals that setting. No setting (or the
 * empty string a pooled connection keeps after an earlier transaction set it) matches nothing.
 *
 * A table created later that carries environment_id must call, in its own migration:
 *
 *     select enable_tenant_isolation('<table>');
 *
 * which enables and forces row-level security, creates the policy and grants billing_app the DML
 * privileges (a test fails for any such table without it). Tables without environment_id get
 * billing_app's privileges from the default privileges set here. A data migration that must touch
 * every environment's rows runs as a superuser, or sets app.environment_id per environment: FORCE
 * subjects the owner to the policies too.
 */
export class Migration20261121009000TenantIsolation extends Migration {
  override up(): void {
    this.addSql(`
      do $$
      begin
        if not exists (select from pg_roles where rolname = 'billing_app') then
          begin
            create role billing_app nologin nosuperuser nobypassrls;
          exception
            when duplicate_object then null;
            when insufficient_privilege then
              raise exception 'cannot create the role billing_app: the migrating user % needs CREATEROLE, '
                'or a DBA runs: create role billing_app nologin; grant billing_app to %;', current_user, current_user;
          end;
        end if;
        if exists (select from pg_roles where rolname = 'billing_app' and (rolsuper or rolbypassrls)) then
          raise exception 'the role billing_app bypasses row-level security; '
            'a DBA runs: alter role billing_app nosuperuser nobypassrls;';
        end if;
        -- From PostgreSQL 16 on, switching to a role takes the SET option of a membership, not just membership.
        if not pg_has_role(current_user, 'billing_app',
            case when current_setting('server_version_num')::int >= 160000 then 'SET' else 'MEMBER' end) then
          begin
            grant billing_app to current_user;
          exception when insufficient_privilege then
            raise exception 'the migrating user % may not switch to the role billing_app; '
              'a DBA runs: grant billing_app to %;', current_user, current_user;
          end;
        end if;
      end
      $$;

      create function enable_tenant_isolation(target regclass) returns void
      language plpgsql as $fn$
      begin
        execute format('alter table %s enable row level security', target);
        execute format('alter table %s force row level security', target);
        execute format('drop policy if exists tenant_isolation on %s', target);
        execute format(
          'create policy tenant_isolation on %s
             using (environment_id = nullif(current_setting(%L, true), %L)::uuid)
             with check (environment_id = nullif(current_setting(%L, true), %L)::uuid)',
          target, 'app.environment_id', '', 'app.environment_id', '');
        execute format('grant select, insert, update, delete on %s to billing_app', target);
      end
      $fn$;
      revoke all on function enable_tenant_isolation(regclass) from public;

      select enable_tenant_isolation(table_class)
      from (
        select c.oid::regclass as table_class
        from pg_class c
        join pg_namespace n on n.oid = c.relnamespace
        join pg_attribute a on a.attrelid = c.oid
        where n.nspname = 'public' and c.relkind in ('r', 'p')
          and a.attname = 'environment_id' and not a.attisdropped
      ) as tenant_tables;

      grant usage on schema public to billing_app;
      -- Resolving a request's token and environment happens before any environment is chosen: these
      -- tables carry no environment_id and have no policy, so the role only reads them (and stamps
      -- last use), it never creates environments or tokens.
      grant select on environment to billing_app;
      grant select, update (last_used_at) on api_token to billing_app;
      grant select, insert, update on rate_limit_counter to billing_app;
      alter default privileges in schema public grant select, insert, update, delete on tables to billing_app;
      alter default privileges in schema public grant usage, select on sequences to billing_app;
    `);
  }

  override down(): void {
    this.addSql(`
      alter default privileges in schema public revoke usage, select on sequences from billing_app;
      alter default privileges in schema public revoke select, insert, update, delete on tables from billing_app;
      do $$
      declare
        tenant_table regclass;
      begin
        for tenant_table in
          select c.oid::regclass from pg_class c
          join pg_policy p on p.polrelid = c.oid and p.polname = 'tenant_isolation'
        loop
          execute format('drop policy tenant_isolation on %s', tenant_table);
          execute format('alter table %s no force row level security', tenant_table);
          execute format('alter table %s disable row level security', tenant_table);
        end loop;
      end
      $$;
      revoke all on all tables in schema public from billing_app;
      revoke usage on schema public from billing_app;
      drop function enable_tenant_isolation(regclass);
    `);
  }
}
