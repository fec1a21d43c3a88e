import { describe, expect, it } from 'vitest';
import { freePort } from '../../src/db/embedded.ts';
import { DatabaseClient, isDatabaseUnavailable } from '../../src/db/unavailable.ts';
import { setupTestApp } from '../support/harness.ts';

const t = setupTestApp();

const failure = (work: Promise<unknown>) =>
  work.then(
    () => expect.fail('expected a failure'),
    (error: unknown) => error,
  );

describe('isDatabaseUnavailable', () => {
  it('is true for a database that refuses connections', async () => {
    // given a port nothing listens on
    const url = new URL(t.databaseUrl);
    url.port = String(await freePort());
    const client = new DatabaseClient({ connectionString: url.toString() });

    // when
    const error = await failure(client.connect());

    // then
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it('is true for a connection the server ends, under a query and after it', async () => {
    // given a connected client, listening for errors as the pool does
    const client = new DatabaseClient({ connectionString: t.databaseUrl });
    client.on('error', () => {});
    await client.connect();
    const [{ pid }] = (await client.query('select pg_backend_pid() as pid')).rows;

    // when the server terminates its connection while a query runs
    const running = failure(client.query('select pg_sleep(10)'));
    await t.sql('select pg_terminate_backend($1)', [pid]);

    // then that query and the next fail as an unavailable database
    const underQuery = await running;
    expect(underQuery).toMatchObject({ code: '57P01' });
    expect(isDatabaseUnavailable(underQuery)).toBe(true);
    const afterIt = await failure(client.query('select 1'));
    expect(isDatabaseUnavailable(afterIt)).toBe(true);
    await client.end().catch(() => {});
  });

  it('is false for an error the database answers a query with', async () => {
    const client = new DatabaseClient({ connectionString: t.databaseUrl });
    await client.connect();
    try {
      const error = await failure(client.query('select 1 / 0'));
      expect(error).toMatchObject({ code: '22012' });
      expect(isDatabaseUnavailable(error)).toBe(false);
    } finally {
      await client.end();
    }
  });

  it("is false for a connection error that is not the database's: a request body the client aborted", () => {
    // what Node's HTTP server fails the body stream with when the client closes its connection mid-body
    const aborted = Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    expect(isDatabaseUnavailable(aborted)).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).toBe(false);
  });
});
