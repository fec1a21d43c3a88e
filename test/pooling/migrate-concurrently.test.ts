import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { migrations } from '../../migrations/index.ts';
import { dropDatabase, ensureDatabase, withDatabase } from '../../src/db/admin.ts';
import { migrate, openOrm } from '../../src/db/orm.ts';
import { entities } from '../../src/modules/registry.ts';

describe('three processes starting at once on a fresh database with MIGRATE_ON_START', () => {
  it('migrate one after the other: the first applies everything, the others find nothing to do', {
    timeout: 120_000,
  }, async () => {
    const adminUrl = inject('adminUrl');
    const name = `migrate_${randomBytes(6).toString('hex')}`;
    await ensureDatabase(adminUrl, name);
    const url = withDatabase(adminUrl, name);
    const orms = await Promise.all([1, 2, 3].map(() => openOrm(url, { entities, poolMax: 1, owner: true })));
    try {
      // when all three migrate at the same moment
      const results = await Promise.allSettled(orms.map((orm) => migrate(orm)));

      // then all succeed, and the migrations were applied once
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      const applied = results.map((result) => (result.status === 'fulfilled' ? result.value.length : -1));
      expect(applied.sort((a, b) => a - b)).toEqual([0, 0, migrations.length]);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query(
          `select count(*)::int as runs, count(distinct name)::int as names from mikro_orm_migrations`,
        );
        expect(rows).toEqual([{ runs: migrations.length, names: migrations.length }]);
        const locks = await client.query(
          `select count(*)::int as count from pg_locks where locktype = 'advisory' and database =
             (select oid from pg_database where datname = current_database())`,
        );
        expect(locks.rows).toEqual([{ count: 0 }]);
      } finally {
        await client.end();
      }
    } finally {
      for (const orm of orms) await orm.close();
      await dropDatabase(adminUrl, name);
    }
  });
});
