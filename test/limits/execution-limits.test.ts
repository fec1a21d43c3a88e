import pg from 'pg';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type App, createApp } from '../../src/app.ts';
import { EXECUTION_LIMITS } from '../../src/config.ts';
import { CustomerCreateInput } from '../../src/modules/customer/customer.input.ts';
import { CustomerService } from '../../src/modules/customer/customer.service.ts';
import type { Route } from '../../src/rest/router.ts';
import { parseInput } from '../../src/validation.ts';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const executionLimits = { timeoutMs: 100, maxResponseBytes: 1000 };
/**
 * The response-size case's limits: the same size, and the default time, which its queries do not test.
 * Under the 100 ms limit a loaded machine answered its first query TIMEOUT now and then (on main too).
 */
const sizeLimits = { ...executionLimits, timeoutMs: EXECUTION_LIMITS.timeoutMs };

/** Writes a customer, then takes longer than the execution limit. */
const slowRoute: Route = {
  method: 'POST',
  path: '/test/slow',
  summary: 'Write, then outlast the execution limit (tests only)',
  response: { status: 200, description: 'Never delivered', schema: z.object({}) },
  handler: async ({ ctx }) => {
    await new CustomerService(ctx).create(parseInput(CustomerCreateInput, { name: 'Slow', currency: 'EUR' }));
    await new Promise((resolve) => setTimeout(resolve, executionLimits.timeoutMs * 5));
    return { status: 200, body: {} };
  },
};

const t = setupTestApp();
const f = invoiceFixtures(t);

describe('execution limits', () => {
  let env: TestEnvironment;
  // The limits are tiny, so only the requests under test go to the apps that have them.
  let limited: App;
  let sized: App;

  beforeAll(async () => {
    env = await t.createEnvironment('Limits');
    limited = createApp({
      orm: t.orm,
      logger: pino({ level: 'silent' }),
      executionLimits,
      extraRoutes: [slowRoute],
    });
    sized = createApp({ orm: t.orm, logger: pino({ level: 'silent' }), executionLimits: sizeLimits });
  });

  const send = async (path: string, body: unknown, app = limited) => {
    const response = await app.fetch(`http://test${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...env.headers },
      body: JSON.stringify(body),
    });
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      body: await response.json(),
    };
  };

  const customerNames = async () =>
    (
      await t.sql<{ name: string }>('select name from customer where environment_id = $1 order by name', [
        env.id,
      ])
    ).map((row) => row.name);

  it('answers a REST request past its deadline with a TIMEOUT problem and rolls its writes back', async () => {
    const response = await send('/test/slow', {});

    expect(response.status).toBe(503);
    expect(response.type).toBe('application/problem+json');
    expect(response.body.code).toBe('TIMEOUT');
    expect(response.body.detail).toContain(`${executionLimits.timeoutMs} ms`);
    expect(await customerNames()).not.toContain('Slow');
  });

  it('answers a GraphQL mutation past its deadline with a TIMEOUT error and rolls it back', async () => {
    // given a customer whose row another transaction holds locked beyond the deadline
    const id = await f.createCustomer(env, { name: 'Locked' });
    const locker = new pg.Client({ connectionString: t.databaseUrl });
    await locker.connect();
    await locker.query('begin');
    await locker.query('select id from customer where id = $1 for update', [id]);
    const release = setTimeout(() => locker.query('rollback'), executionLimits.timeoutMs * 4);

    try {
      // when a mutation waits for that row
      const response = await send('/graphql', {
        query: `mutation ($id: UUID!) { customerUpdate(id: $id, input: { name: "Renamed" }) { userErrors { code } } }`,
        variables: { id },
      });

      // then it is answered TIMEOUT and changed nothing
      expect(response.body.data).toEqual({ customerUpdate: null });
      expect(response.body.errors[0].extensions.code).toBe('TIMEOUT');
      expect(await customerNames()).toContain('Locked');
      expect(await customerNames()).not.toContain('Renamed');
    } finally {
      clearTimeout(release);
      await locker.end();
    }
  });

  it('replaces a GraphQL response over the size limit by a RESPONSE_TOO_LARGE error', async () => {
    for (let i = 0; i < 20; i++) await f.createCustomer(env, { name: `Customer ${i}` });
    const query = '{ customers(first: 100) { edges { node { id name email currency } } } }';

    const small = await send(
      '/graphql',
      { query: '{ customers(first: 2) { edges { node { id } } } }' },
      sized,
    );
    const large = await send('/graphql', { query }, sized);

    expect(small.body.errors).toBeUndefined();
    expect(large.body.data).toBeUndefined();
    const [error] = large.body.errors;
    expect(error.extensions).toMatchObject({
      code: 'RESPONSE_TOO_LARGE',
      maxBytes: sizeLimits.maxResponseBytes,
    });
    expect(error.extensions.bytes).toBeGreaterThan(sizeLimits.maxResponseBytes);
  });
});
