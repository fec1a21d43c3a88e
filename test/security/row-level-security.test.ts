import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { APP_ROLE } from '../../src/db/orm.ts';
import { ENVIRONMENT_SETTING, inEnvironment } from '../../src/db/tenant-transaction.ts';
import { setupTestApp } from '../support/harness.ts';
import { type MarkedEnvironment, tenantFixtures, tenantTables } from './fixtures.ts';

const t = setupTestApp();
const f = tenantFixtures(t);

let a: MarkedEnvironment;
let b: MarkedEnvironment;

beforeAll(async () => {
  a = await f.createEnvironment('A');
  b = await f.createEnvironment('B');
  await f.populate(a);
  await f.populate(b);
});

/** A connection of the DATABASE_URL user switched to the application role, as the app's connections are. */
async function asAppRole<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: t.databaseUrl });
  await client.connect();
  try {
    await client.query(`set role ${pg.escapeIdentifier(APP_ROLE)}`);
    return await run(client);
  } finally {
    await client.end();
  }
}

const count = async (client: pg.Client, table: string, where = 'true') =>
  Number(
    (await client.query(`select count(*) from ${pg.escapeIdentifier(table)} where ${where}`)).rows[0].count,
  );

/** Runs `run` in a transaction of `client` set to `environmentId` the way the app sets it, then rolls back. */
async function inTransaction<T>(client: pg.Client, environmentId: string, run: () => Promise<T>): Promise<T> {
  await client.query('begin');
  try {
    await client.query('select set_config($1, $2, true)', [ENVIRONMENT_SETTING, environmentId]);
    return await run();
  } finally {
    await client.query('rollback');
  }
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => 'accepted',
    (error: { code?: string }) => error.code,
  );

describe('the application role', () => {
  it('is what the app’s connections act as: it owns nothing and cannot bypass row-level security', async () => {
    const [row] = await t.orm.em.getConnection().execute(
      `select current_user as role, session_user <> current_user as switched, rolsuper, rolbypassrls,
         (select count(*) from pg_class where relowner = r.oid)::int as owned
       from pg_roles r where rolname = current_user`,
    );
    expect(row).toEqual({ role: APP_ROLE, switched: true, rolsuper: false, rolbypassrls: false, owned: 0 });
  });

  it('reads environments and tokens but cannot create them, widen a token or undo the isolation', async () => {
    await asAppRole(async (client) => {
      expect(await count(client, 'environment')).toBeGreaterThanOrEqual(2);
      expect(
        await refusal(
          client.query('insert into environment (id, name, created_at) values ($1, $2, now())', [
            randomUUID(),
            'Rogue',
          ]),
        ),
      ).toBe('42501');
      expect(
        await refusal(client.query('update api_token set environment_ids = array[$1::uuid]', [b.id])),
      ).toBe('42501');
      expect(await refusal(client.query('alter table customer no force row level security'))).toBe('42501');
      expect(await refusal(client.query('drop policy tenant_isolation on customer'))).toBe('42501');
    });
  });
});

describe('environment settings', () => {
  it('lets a transaction change its own environment’s tax rounding only, and no other column', async () => {
    await asAppRole(async (client) => {
      const changed = await inTransaction(client, a.id, async () => {
        const own = await client.query(`update environment set tax_rounding = 'line' where id = $1`, [a.id]);
        const other = await client.query(`update environment set tax_rounding = 'line' where id = $1`, [
          b.id,
        ]);
        const renamed = await refusal(
          client.query(`update environment set name = 'Rogue' where id = $1`, [a.id]),
        );
        return { own: own.rowCount, other: other.rowCount, renamed };
      });
      expect(changed).toEqual({ own: 1, other: 0, renamed: '42501' });
      const outside = await client.query(`update environment set tax_rounding = 'line'`);
      expect(outside.rowCount).toBe(0);
    });
  });
});

describe('row-level security', () => {
  it('confines an environment’s transaction to the application role even on the owner’s connections', async () => {
    // when the owner's ORM (a superuser here) runs work in A's environment
    const inside = await inEnvironment(t.adminOrm.em, a.id, async (em) => {
      const [row] = await em.execute<{ role: string; foreign: string; own: string }[]>(
        `select current_user as role,
           (select count(*) from customer where environment_id <> ?) as foreign,
           (select count(*) from customer where environment_id = ?) as own`,
        [a.id, a.id],
      );
      return row;
    });

    // then it acted as the application role and saw A's rows only; the owner is itself again afterwards
    expect(inside).toEqual({ role: APP_ROLE, foreign: '0', own: expect.not.stringMatching(/^0$/) });
    const [after] = await t.adminOrm.em.fork().execute<{ role: string }[]>('select current_user as role');
    expect(after?.role).not.toBe(APP_ROLE);
  });

  it('shows a query with no environment set no rows of any tenant table, though every one has rows', async () => {
    // given rows in every tenant table (counted as the owner, a superuser here)
    const tables = await tenantTables(t);
    const empty: string[] = [];
    for (const table of tables) {
      const [row] = await t.sql<{ count: string }>(`select count(*) from ${pg.escapeIdentifier(table)}`);
      if (Number(row?.count) === 0) empty.push(table);
    }
    expect(empty, 'tables the fixtures leave empty: add their rows to populate()').toEqual([]);

    // when the application role reads them with no environment set, then it sees none
    await asAppRole(async (client) => {
      for (const table of tables)
        expect({ table, rows: await count(client, table) }).toEqual({ table, rows: 0 });
    });
  });

  it('shows a transaction only its environment’s rows, and the connection nothing once it has ended', async () => {
    const tables = await tenantTables(t);
    await asAppRole(async (client) => {
      await inTransaction(client, a.id, async () => {
        expect(await count(client, 'customer')).toBeGreaterThan(0);
        for (const table of tables) {
          const foreign = await count(client, table, `environment_id <> '${a.id}'`);
          expect({ table, foreign }).toEqual({ table, foreign: 0 });
        }
      });
      // The setting is back to '' on this connection now, which the policy reads as no environment.
      expect(await count(client, 'customer')).toBe(0);
    });
  });

  it('refuses to write a row into another environment and to move one there (WITH CHECK)', async () => {
    await asAppRole(async (client) => {
      const insert = inTransaction(client, a.id, () =>
        client.query(
          `insert into customer (id, environment_id, name, created_at) values ($1, $2, 'Planted', now())`,
          [randomUUID(), b.id],
        ),
      );
      expect(await refusal(insert)).toBe('42501');

      const move = inTransaction(client, a.id, () =>
        client.query('update customer set environment_id = $1 where environment_id = $2', [b.id, a.id]),
      );
      expect(await refusal(move)).toBe('42501');
    });
  });

  it('lets a transaction change or delete no row of another environment', async () => {
    const before = await t.sql('select * from customer where environment_id = $1 order by id', [b.id]);
    await asAppRole(async (client) => {
      const changed = await inTransaction(client, a.id, async () => [
        (await client.query(`update customer set name = 'Hijacked' where environment_id = $1`, [b.id]))
          .rowCount,
        (await client.query('delete from invoice_item where environment_id = $1', [b.id])).rowCount,
        (await client.query('delete from audit_event where environment_id = $1', [b.id])).rowCount,
      ]);
      expect(changed).toEqual([0, 0, 0]);
    });
    expect(await t.sql('select * from customer where environment_id = $1 order by id', [b.id])).toEqual(
      before,
    );
  });
});

/** The policy every tenant table carries, as PostgreSQL prints it back. */
const POLICY_EXPRESSION = `(environment_id = (NULLIF(current_setting('${ENVIRONMENT_SETTING}'::text, true), ''::text))::uuid)`;

describe('every table with an environment_id', () => {
  it('forces row-level security under the environment policy and grants the application role its rows only', async () => {
    const tables = await tenantTables(t);
    expect(tables.length).toBeGreaterThan(0);
    for (const table of tables) {
      const [state] = await t.sql(
        `select c.relrowsecurity as enabled, c.relforcerowsecurity as forced,
           has_table_privilege($2, c.oid, 'select') and has_table_privilege($2, c.oid, 'insert')
             and has_table_privilege($2, c.oid, 'update') and has_table_privilege($2, c.oid, 'delete') as granted,
           coalesce((select json_agg(json_build_object('name', p.policyname, 'permissive', p.permissive,
               'roles', p.roles, 'command', p.cmd, 'using', p.qual, 'check', p.with_check))
             from pg_policies p where p.schemaname = 'public' and p.tablename = c.relname), '[]') as policies
         from pg_class c where c.oid = $1::regclass`,
        [`public.${pg.escapeIdentifier(table)}`, APP_ROLE],
      );
      expect(
        { table, ...state },
        `${table}: call enable_tenant_isolation('${table}') in its migration`,
      ).toEqual({
        table,
        enabled: true,
        forced: true,
        granted: true,
        policies: [
          {
            name: 'tenant_isolation',
            permissive: 'PERMISSIVE',
            roles: ['public'],
            command: 'ALL',
            using: POLICY_EXPRESSION,
            check: POLICY_EXPRESSION,
          },
        ],
      });
    }
  });
});
