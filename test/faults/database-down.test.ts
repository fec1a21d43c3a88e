import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessService } from '../../src/auth/access.service.ts';
import { type EmbeddedDatabase, freePort, startEmbeddedDatabase } from '../../src/db/embedded.ts';
import { migrate, openOrm } from '../../src/db/orm.ts';
import { entities } from '../../src/modules/registry.ts';
import { type ServerProcess, startServer, stopServer } from '../support/server-process.ts';

/**
 * A real server process on a PostgreSQL of its own (not the suite's shared one), which the test stops
 * and starts again on the same port.
 */
describe('the server while its database is down', () => {
  let dataDir: string;
  let port: number;
  let database: EmbeddedDatabase;
  let server: ServerProcess;
  let headers: Record<string, string>;
  let customerUrl: string;

  const startDatabase = () => startEmbeddedDatabase(dataDir, { port });

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'billing-fault-'));
    // Run as root, PostgreSQL runs as its own user and must be able to enter the directory.
    await chmod(dataDir, 0o755);
    port = await freePort();
    database = await startDatabase();
    const orm = await openOrm(database.url, { entities, poolMax: 1, owner: true });
    await migrate(orm);
    const access = new AccessService(orm.em.fork());
    const environment = await access.createEnvironment('Fault');
    const { secret } = await access.createToken([environment.id]);
    await orm.close();
    headers = {
      authorization: `Bearer ${secret}`,
      'x-environment': environment.id,
      'content-type': 'application/json',
    };
    server = await startServer({ DATABASE_URL: database.url });
    const created = await graphql(
      'mutation { customerCreate(input: { name: "Survivor" }) { customer { id } } }',
    );
    customerUrl = `${server.url}/customers/${(await created.json()).data.customerCreate.customer.id}`;
  }, 120_000);

  afterAll(async () => {
    if (server) await stopServer(server);
    await database?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const graphql = (query: string) =>
    fetch(`${server.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query }) });

  it('answers 503 with Retry-After, fails readiness, stays alive, and recovers when the database returns', async () => {
    // given a working server
    expect((await fetch(customerUrl, { headers })).status).toBe(200);
    expect((await fetch(`${server.url}/ready`)).status).toBe(200);

    // when its database stops
    await database.stop();

    // then both faces answer 503 with Retry-After
    const rest = await fetch(customerUrl, { headers });
    expect(rest.status).toBe(503);
    expect(rest.headers.get('content-type')).toBe('application/problem+json');
    expect(Number(rest.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await rest.json()).toMatchObject({ status: 503, title: 'Service unavailable' });
    const patch = await fetch(customerUrl, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ name: 'Lost' }),
    });
    expect(patch.status).toBe(503);
    const query = await graphql('{ customers { edges { cursor } } }');
    expect(query.status).toBe(503);
    expect(Number(query.headers.get('retry-after'))).toBeGreaterThan(0);

    // and readiness fails while liveness holds, and the process is still running
    expect((await fetch(`${server.url}/ready`)).status).not.toBe(200);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect(server.process.exitCode).toBeNull();

    // when the database comes back, service resumes without a restart
    database = await startDatabase();
    expect((await fetch(`${server.url}/ready`)).status).toBe(200);
    const again = await fetch(customerUrl, { headers });
    expect(again.status).toBe(200);
    expect((await again.json()).name).toBe('Survivor');
    const created = await graphql(
      'mutation { customerCreate(input: { name: "After" }) { customer { id } } }',
    );
    expect((await created.json()).data.customerCreate.customer.id).toBeDefined();
    expect(server.output()).not.toMatch(/uncaught|unhandled/i);
  }, 120_000);
});
