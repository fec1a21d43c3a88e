import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { AccessService } from '../../src/auth/access.service.ts';
import { dropDatabase, withDatabase } from '../../src/db/admin.ts';
import { APP_ROLE, assertAppRole, migrate, openOrm } from '../../src/db/orm.ts';
import { entities } from '../../src/modules/registry.ts';

/**
 * A managed database: the DATABASE_URL user owns the database but is no superuser and may not create
 * roles. The suite's own runs connect as a superuser; this one connects as such an owner.
 */
describe('a database owner that is not a superuser', () => {
  const adminUrl = inject('adminUrl');
  const suffix = randomBytes(6).toString('hex');
  const owner = `owner_${suffix}`;
  const password = randomBytes(12).toString('hex');
  const database = `managed_${suffix}`;
  const ownerUrl = (() => {
    const url = new URL(withDatabase(adminUrl, database));
    url.username = owner;
    url.password = password;
    return url.toString();
  })();

  const asSuperuser = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    await asSuperuser(`create role ${owner} login password '${password}' nosuperuser nocreaterole`);
    await asSuperuser(`create database ${database} owner ${owner}`);
  });

  afterAll(async () => {
    await dropDatabase(adminUrl, database);
    await asSuperuser(`drop role if exists ${owner}`);
  });

  it('cannot migrate until it may switch to the application role, and says what a DBA must grant', async () => {
    const orm = await openOrm(ownerUrl, { entities, poolMax: 1, owner: true });
    try {
      await expect(migrate(orm)).rejects.toThrow(`grant ${APP_ROLE} to ${owner}`);
    } finally {
      await orm.close();
    }
  });

  it('gets a clear message at start when its connections cannot act as the application role', async () => {
    const orm = await openOrm(ownerUrl, { entities, poolMax: 1 });
    try {
      await expect(assertAppRole(orm)).rejects.toThrow(`may not switch to the role ${APP_ROLE}`);
    } finally {
      await orm.close();
    }
  });

  it('migrates once granted the role, serves requests, and is itself held to the policies', async () => {
    // given the grant a DBA makes
    await asSuperuser(`grant ${APP_ROLE} to ${owner}`);
    const ownerOrm = await openOrm(ownerUrl, { entities, poolMax: 1, owner: true });
    const orm = await openOrm(ownerUrl, { entities, poolMax: 2 });
    try {
      // when it migrates and serves a request
      await migrate(ownerOrm);
      await assertAppRole(orm);
      const access = new AccessService(ownerOrm.em.fork());
      const environment = await access.createEnvironment('Managed');
      const { secret } = await access.createToken([environment.id]);
      const response = await createApp({ orm, logger: pino({ level: 'silent' }) }).fetch(
        'http://test/graphql',
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${secret}`,
            'x-environment': environment.id,
            'content-type': 'application/json',
          },
          body: JSON.stringify({
            query:
              'mutation { customerCreate(input: { name: "Managed" }) { customer { name } userErrors { code } } }',
          }),
        },
      );

      // then the request works, and the owner sees no tenant row without an environment (FORCE)
      expect(await response.json()).toEqual({
        data: { customerCreate: { customer: { name: 'Managed' }, userErrors: [] } },
      });
      const [row] = await ownerOrm.em.getConnection().execute('select count(*)::int as count from customer');
      expect(row).toEqual({ count: 0 });
    } finally {
      await orm.close();
      await ownerOrm.close();
    }
  });
});
