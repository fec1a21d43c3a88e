import { randomBytes } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { migrations } from '../../migrations/index.ts';
import { dropDatabase, ensureDatabase, withDatabase } from '../../src/db/admin.ts';
import { migrate, openOrm } from '../../src/db/orm.ts';
import { entities } from '../../src/modules/registry.ts';

/**
 * Pending migrations run whatever their name: a database that ran the tenant isolation migration before
 * the subscriptions branch landed runs Migration20261121003000Subscriptions after it.
 */
describe('a database migrated past the tenant isolation before the subscription tables existed', () => {
  it('gets forced row-level security on the subscription tables when they arrive', async () => {
    const adminUrl = inject('adminUrl');
    const name = `order_${randomBytes(6).toString('hex')}`;
    await ensureDatabase(adminUrl, name);
    const orm = await openOrm(withDatabase(adminUrl, name), { entities, poolMax: 1, owner: true });
    try {
      // given the migrations up to the tenant isolation, without the subscription one: what such a
      // database had (everything later was written after the subscriptions landed)
      const names = migrations.map((migration) => migration.name);
      const isolation = names.indexOf('Migration20261121009000TenantIsolation');
      const subscriptions = 'Migration20261121003000Subscriptions';
      await orm.migrator.up({
        migrations: names.slice(0, isolation + 1).filter((name) => name !== subscriptions),
      });

      // when the rest is migrated
      expect(await migrate(orm)).toEqual([subscriptions, ...names.slice(isolation + 1)]);

      // then every table with an environment_id is isolated, the subscription tables included
      const tables = await orm.em
        .getConnection()
        .execute<{ table: string; enabled: boolean; forced: boolean; policies: number }[]>(
          `select c.relname as table, c.relrowsecurity as enabled, c.relforcerowsecurity as forced,
           (select count(*)::int from pg_policy p where p.polrelid = c.oid and p.polname = 'tenant_isolation') as policies
         from pg_class c
         join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
         join pg_attribute a on a.attrelid = c.oid and a.attname = 'environment_id' and not a.attisdropped
         where c.relkind = 'r' order by c.relname`,
        );
      expect(tables.map((row) => row.table)).toEqual(
        expect.arrayContaining([
          'billed_period',
          'billing_run',
          'subscription',
          'subscription_item',
          'usage_record',
        ]),
      );
      expect(tables.filter((row) => !row.enabled || !row.forced || row.policies !== 1)).toEqual([]);
    } finally {
      await orm.close();
      await dropDatabase(adminUrl, name);
    }
  });
});
