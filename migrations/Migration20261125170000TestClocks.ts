import { Migration } from '@mikro-orm/migrations';

/**
 * Test clocks: simulated time owned by a test environment. A customer attached to a clock (at its
 * creation, never afterwards) lives on the clock's frozen time; advancing the clock bills that
 * customer, and only the clock's customers, up to the new time. A billing run records the clock it
 * ran for (`triggered_by` 'test_clock'). Environments keep their kind: those that exist stay `live`.
 */
export class Migration20261125170000TestClocks extends Migration {
  override up(): void {
    this.addSql(`
      create table test_clock (
        id uuid primary key,
        environment_id uuid not null references environment (id),
        name varchar(200) not null,
        frozen_time timestamptz not null,
        status text not null check (status in ('ready', 'advancing')),
        advancing_to timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz,
        constraint test_clock_environment_id_unique unique (environment_id, id),
        constraint test_clock_advancing_check check ((status = 'advancing') = (advancing_to is not null)),
        constraint test_clock_forward_check check (advancing_to is null or advancing_to >= frozen_time)
      );
      select enable_tenant_isolation('test_clock');

      alter table customer
        add column test_clock_id uuid,
        add constraint customer_test_clock_fk foreign key (environment_id, test_clock_id)
          references test_clock (environment_id, id);
      create index customer_test_clock_index on customer (environment_id, test_clock_id)
        where test_clock_id is not null;

      alter table billing_run
        add column test_clock_id uuid,
        add constraint billing_run_test_clock_fk foreign key (environment_id, test_clock_id)
          references test_clock (environment_id, id) on delete set null (test_clock_id);
      alter table billing_run drop constraint billing_run_triggered_by_check;
      alter table billing_run add constraint billing_run_triggered_by_check
        check (triggered_by in ('api', 'schedule', 'test_clock'));
    `);
  }

  override down(): void {
    this.addSql(`
      delete from billing_run where triggered_by = 'test_clock';
      alter table billing_run drop constraint billing_run_triggered_by_check;
      alter table billing_run add constraint billing_run_triggered_by_check
        check (triggered_by in ('api', 'schedule'));
      alter table billing_run drop column test_clock_id;
      alter table customer drop column test_clock_id;
      drop table test_clock;
    `);
  }
}
