import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  idempotencyLockName,
  purgeExpiredIdempotencyKeys,
} from '../../src/idempotency/idempotency.service.ts';
import { CustomerCreateInput } from '../../src/modules/customer/customer.input.ts';
import { CustomerResponse, customerResponse } from '../../src/modules/customer/customer.rest.ts';
import { CustomerService } from '../../src/modules/customer/customer.service.ts';
import type { Route } from '../../src/rest/router.ts';
import { parseInput } from '../../src/validation.ts';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';

/** A REST POST like the documented ones, so the REST side is tested whatever routes exist. */
const createCustomerRoute: Route = {
  method: 'POST',
  path: '/test/customers',
  summary: 'Create a customer (tests only)',
  body: CustomerCreateInput,
  response: { status: 201, description: 'The new customer', schema: CustomerResponse },
  handler: async ({ ctx, body }) => {
    const customer = await new CustomerService(ctx).create(parseInput(CustomerCreateInput, body));
    return { status: 201, body: customerResponse(customer) };
  },
};

const t = setupTestApp({ extraRoutes: [createCustomerRoute] });

const CREATE = `mutation ($input: CustomerCreateInput!) {
  customerCreate(input: $input) { customer { id name } userErrors { code } }
}`;

const countCustomers = async (env: TestEnvironment, name: string) =>
  (
    await t.sql<{ n: number }>(
      'select count(*)::int as n from customer where environment_id = $1 and name = $2',
      [env.id, name],
    )
  )[0]?.n;

describe('Idempotency-Key', () => {
  let env: TestEnvironment;
  let other: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment('Main');
    other = await t.createEnvironment('Other');
  });

  /** Runs `work` while another connection holds the key's lock, as a request still running under it does. */
  const holdingKeyLock = async (key: string, work: () => Promise<void>) => {
    const [token] = await t.sql<{ id: string }>('select id from api_token where $1 = any(environment_ids)', [
      env.id,
    ]);
    const running = new pg.Client({ connectionString: t.databaseUrl });
    await running.connect();
    try {
      await running.query('select pg_advisory_lock(hashtextextended($1, 0))', [
        idempotencyLockName(env.id, token?.id as string, key),
      ]);
      await work();
    } finally {
      await running.end();
    }
  };

  describe('on GraphQL mutations', () => {
    const create = (input: Record<string, unknown>, key: string, who = env) =>
      t.graphql(CREATE, { input }, { env: who, headers: { 'idempotency-key': key } });

    it('replays the original result on a retry, and creates one customer', async () => {
      // given a mutation that succeeded under a key
      const key = randomUUID();
      const first = await create({ name: 'Replayed', email: 'replayed@example.com' }, key);
      expect(first.status).toBe(200);
      expect(first.headers.get('idempotent-replayed')).toBeNull();

      // when it is retried, with its variables in another order
      const retry = await t.graphql(
        CREATE,
        { input: { email: 'replayed@example.com', name: 'Replayed' } },
        { env, headers: { 'idempotency-key': key } },
      );

      // then the original result comes back, marked as replayed, and nothing new exists
      expect(retry.status).toBe(200);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body).toEqual(first.body);
      expect(await countCustomers(env, 'Replayed')).toBe(1);
    });

    it('answers 422 when the key is reused with different variables', async () => {
      const key = randomUUID();
      await create({ name: 'Original' }, key);
      const reused = await create({ name: 'Different' }, key);

      expect(reused.status).toBe(422);
      expect(reused.body.errors[0].extensions.code).toBe('IDEMPOTENCY_MISMATCH');
      expect(await countCustomers(env, 'Different')).toBe(0);
    });

    it('keeps keys apart per environment and token', async () => {
      const key = randomUUID();
      const mine = await create({ name: 'Per tenant' }, key);
      const theirs = await create({ name: 'Per tenant' }, key, other);

      expect(theirs.headers.get('idempotent-replayed')).toBeNull();
      expect(theirs.body.data.customerCreate.customer.id).not.toBe(mine.body.data.customerCreate.customer.id);
      expect(await countCustomers(other, 'Per tenant')).toBe(1);
    });

    it('stores nothing for invalid input or userErrors, so a corrected retry runs', async () => {
      // given a request refused for its input and one refused by a business rule, both under keys
      const invalidKey = randomUUID();
      const invalid = await create({ name: '' }, invalidKey);
      expect(invalid.body.errors[0].extensions.code).toBe('INVALID_INPUT');
      await create({ name: 'Holder', handle: 'taken' }, randomUUID());
      const duplicateKey = randomUUID();
      const duplicate = await t.graphql(
        'mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } } }',
        { input: { name: 'Second', handle: 'taken' } },
        { env, headers: { 'idempotency-key': duplicateKey } },
      );
      expect(duplicate.body.data.customerCreate.customer).toBeNull();

      // then neither key is stored
      const stored = await t.sql('select key from idempotency_key where key = any($1)', [
        [invalidKey, duplicateKey],
      ]);
      expect(stored).toEqual([]);

      // and the keys work for a request that succeeds
      const corrected = await create({ name: 'Corrected' }, invalidKey);
      expect(corrected.body.data.customerCreate.userErrors).toEqual([]);
      expect(corrected.headers.get('idempotent-replayed')).toBeNull();
    });

    it('answers 409 with Retry-After while a request with the same key is still running', async () => {
      // given a request under the key holding its lock (as a running one does)
      const key = randomUUID();
      await holdingKeyLock(key, async () => {
        // when a duplicate arrives
        const duplicate = await create({ name: 'In flight' }, key);

        // then it is refused without doing anything, and told when to retry
        expect(duplicate.status).toBe(409);
        expect(duplicate.headers.get('retry-after')).toBe('1');
        expect(duplicate.body.errors[0].extensions.code).toBe('IDEMPOTENCY_IN_FLIGHT');
        expect(await countCustomers(env, 'In flight')).toBe(0);
      });
      const afterwards = await create({ name: 'In flight' }, key);
      expect(afterwards.body.data.customerCreate.userErrors).toEqual([]);
    });

    it('creates exactly one object from 50 concurrent identical requests', async () => {
      const key = randomUUID();
      const responses = await Promise.all(
        Array.from({ length: 50 }, () => create({ name: 'Concurrent' }, key)),
      );

      expect(await countCustomers(env, 'Concurrent')).toBe(1);
      const succeeded = responses.filter((response) => response.status === 200);
      const refused = responses.filter((response) => response.status === 409);
      expect(succeeded.length + refused.length).toBe(50);
      expect(succeeded.filter((response) => !response.headers.get('idempotent-replayed'))).toHaveLength(1);
      const ids = new Set(succeeded.map((response) => response.body.data.customerCreate.customer.id));
      expect(ids.size).toBe(1);
      for (const response of refused) {
        expect(response.body.errors[0].extensions.code).toBe('IDEMPOTENCY_IN_FLIGHT');
      }
    });

    it('ignores the key on queries', async () => {
      const key = randomUUID();
      await create({ name: 'Query key' }, key);
      const query = await t.graphql(
        '{ customers(first: 1) { edges { cursor } } }',
        {},
        {
          env,
          headers: { 'idempotency-key': key },
        },
      );
      expect(query.status).toBe(200);
      expect(query.body.data.customers.edges).toHaveLength(1);
    });

    it('refuses a malformed key', async () => {
      const response = await create({ name: 'Bad key' }, 'x'.repeat(256));
      expect(response.status).toBe(400);
      expect(response.body.errors[0].extensions.code).toBe('INVALID_INPUT');
      expect(await countCustomers(env, 'Bad key')).toBe(0);
    });
  });

  describe('on REST POSTs', () => {
    const post = (body: unknown, key: string) =>
      t.rest('POST', '/test/customers', { env, body, headers: { 'idempotency-key': key } });

    it('replays the original status and body with Idempotent-Replayed: true', async () => {
      const key = randomUUID();
      const first = await post({ name: 'REST once', email: 'once@example.com' }, key);
      const retry = await post({ email: 'once@example.com', name: 'REST once' }, key);

      expect(first.status).toBe(201);
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.headers.get('content-type')).toBe(first.headers.get('content-type'));
      expect(retry.body).toEqual(first.body);
      expect(await countCustomers(env, 'REST once')).toBe(1);
    });

    it('answers 409 with Retry-After while a request with the same key is still running', async () => {
      const key = randomUUID();
      await holdingKeyLock(key, async () => {
        const duplicate = await post({ name: 'REST in flight' }, key);
        expectProblem(duplicate, 409);
        expect(duplicate.body.code).toBe('IDEMPOTENCY_IN_FLIGHT');
        expect(duplicate.headers.get('retry-after')).toBe('1');
        expect(await countCustomers(env, 'REST in flight')).toBe(0);
      });
    });

    it('answers 422 for the same key with another body', async () => {
      const key = randomUUID();
      await post({ name: 'REST original' }, key);
      const reused = await post({ name: 'REST other' }, key);
      expectProblem(reused, 422);
      expect(reused.body.code).toBe('IDEMPOTENCY_MISMATCH');
    });

    it('stores nothing for a 4xx', async () => {
      const key = randomUUID();
      expectProblem(await post({ name: '' }, key), 400);
      const retry = await post({ name: 'REST fixed' }, key);
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
    });

    it('creates exactly one object from concurrent identical requests', async () => {
      const key = randomUUID();
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => post({ name: 'REST concurrent' }, key)),
      );
      expect(await countCustomers(env, 'REST concurrent')).toBe(1);
      expect(responses.every((response) => [201, 409].includes(response.status))).toBe(true);
      expect(responses.filter((r) => r.status === 201 && !r.headers.get('idempotent-replayed'))).toHaveLength(
        1,
      );
    });

    it('refuses a malformed key with 400', async () => {
      expectProblem(await post({ name: 'REST bad key' }, 'not\u00e9ascii'), 400);
    });
  });

  describe('retention', () => {
    it('forgets keys after 24 hours: they run afresh and are purged', async () => {
      // given a key stored 25 hours ago and one stored now
      const oldKey = randomUUID();
      const freshKey = randomUUID();
      await t.rest('POST', '/test/customers', {
        env,
        body: { name: 'Old' },
        headers: { 'idempotency-key': oldKey },
      });
      await t.rest('POST', '/test/customers', {
        env,
        body: { name: 'Fresh' },
        headers: { 'idempotency-key': freshKey },
      });
      await t.sql("update idempotency_key set created_at = now() - interval '25 hours' where key = $1", [
        oldKey,
      ]);

      // when the old key is used again, it is a new request
      const again = await t.rest('POST', '/test/customers', {
        env,
        body: { name: 'Old' },
        headers: { 'idempotency-key': oldKey },
      });
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      expect(await countCustomers(env, 'Old')).toBe(2);

      // and the purge removes only expired keys
      await t.sql("update idempotency_key set created_at = now() - interval '25 hours' where key = $1", [
        oldKey,
      ]);
      expect(await purgeExpiredIdempotencyKeys(t.orm.em.fork())).toBeGreaterThanOrEqual(1);
      const left = await t.sql<{ key: string }>('select key from idempotency_key where key = any($1)', [
        [oldKey, freshKey],
      ]);
      expect(left).toEqual([{ key: freshKey }]);
    });
  });
});
