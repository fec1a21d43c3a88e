import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, setupTestApp, type TestEnvironment } from '../../support/harness.ts';

const t = setupTestApp();

const CUSTOMER_FIELDS = `id name companyName handle email currency paymentTerm collectionMode createdAt updatedAt
  billingAddress { street1 street2 postalCode city county country state }`;

const CREATE = `mutation ($input: CustomerCreateInput!) {
  customerCreate(input: $input) { customer { ${CUSTOMER_FIELDS} } userErrors { field message code } }
}`;
const UPDATE = `mutation ($id: UUID!, $input: CustomerUpdateInput!) {
  customerUpdate(id: $id, input: $input) { customer { ${CUSTOMER_FIELDS} } userErrors { field message code } }
}`;

async function createCustomer(env: TestEnvironment, input: Record<string, unknown>) {
  const response = await t.graphql(CREATE, { input }, { env });
  expect(response.status).toBe(200);
  expect(response.body.errors).toBeUndefined();
  return response.body.data.customerCreate;
}

describe('customers', () => {
  let env: TestEnvironment;
  let other: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment('Main');
    other = await t.createEnvironment('Other');
  });

  describe('GraphQL', () => {
    it('creates a customer with defaults and reads it back', async () => {
      const { customer, userErrors } = await createCustomer(env, {
        name: '  Ada Lovelace ',
        handle: 'ada',
        email: 'ada@example.com',
        currency: 'eur',
        paymentTerm: 'net30',
        billingAddress: { street1: '1 Analytical Way', city: 'London', country: 'GB' },
      });

      expect(userErrors).toEqual([]);
      expect(customer).toMatchObject({
        name: 'Ada Lovelace',
        handle: 'ada',
        currency: 'EUR',
        paymentTerm: 'net30',
        collectionMode: 'send_invoice',
        companyName: null,
        updatedAt: null,
        billingAddress: {
          street1: '1 Analytical Way',
          street2: null,
          city: 'London',
          country: 'GB',
          state: null,
        },
      });
      const read = await t.graphql(
        'query ($id: UUID!) { customer(id: $id) { id name } }',
        { id: customer.id },
        { env },
      );
      expect(read.body.data.customer).toEqual({ id: customer.id, name: 'Ada Lovelace' });
      const [row] = await t.sql('select environment_id, currency from customer where id = $1', [customer.id]);
      expect(row).toEqual({ environment_id: env.id, currency: 'EUR' });
    });

    it('rejects invalid input naming each field, and writes nothing', async () => {
      const before = await t.sql('select count(*)::int as n from customer');
      const response = await t.graphql(
        CREATE,
        { input: { name: '', email: 'not-an-email', currency: 'XYZ', paymentTerm: '30 days' } },
        { env },
      );

      // Refused before it runs (the query cost check coerces the arguments first): no customer in the answer.
      expect(response.body.data?.customerCreate ?? null).toBeNull();
      const [error] = response.body.errors;
      expect(error.extensions.code).toBe('INVALID_INPUT');
      expect(error.extensions.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
        '/input/currency',
        '/input/email',
        '/input/name',
        '/input/paymentTerm',
      ]);
      expect(await t.sql('select count(*)::int as n from customer')).toEqual(before);
    });

    it('reports a duplicate handle as a user error', async () => {
      await createCustomer(env, { name: 'First', handle: 'dup' });
      const { customer, userErrors } = await createCustomer(env, { name: 'Second', handle: 'dup' });
      expect(customer).toBeNull();
      expect(userErrors).toEqual([
        { field: ['input', 'handle'], message: expect.any(String), code: 'DUPLICATE' },
      ]);
    });

    it('allows the same handle in two environments', async () => {
      const first = await createCustomer(env, { name: 'Shared', handle: 'shared-handle' });
      const second = await createCustomer(other, { name: 'Shared', handle: 'shared-handle' });
      expect(first.userErrors).toEqual([]);
      expect(second.userErrors).toEqual([]);
    });

    it('updates only the fields given and clears those set to null', async () => {
      const { customer } = await createCustomer(env, {
        name: 'Grace',
        email: 'grace@example.com',
        currency: 'USD',
      });
      const response = await t.graphql(
        UPDATE,
        { id: customer.id, input: { email: null, collectionMode: 'automatic' } },
        { env },
      );
      const updated = response.body.data.customerUpdate.customer;
      expect(updated).toMatchObject({
        name: 'Grace',
        email: null,
        currency: 'USD',
        collectionMode: 'automatic',
      });
      expect(updated.updatedAt).not.toBeNull();
    });

    it('treats another environment’s customer as missing', async () => {
      const { customer } = await createCustomer(other, { name: 'Hidden' });
      const read = await t.graphql(
        'query ($id: UUID!) { customer(id: $id) { id } }',
        { id: customer.id },
        { env },
      );
      expect(read.body.data.customer).toBeNull();
      const update = await t.graphql(UPDATE, { id: customer.id, input: { name: 'Stolen' } }, { env });
      expect(update.body.data.customerUpdate).toEqual({
        customer: null,
        userErrors: [{ field: null, message: expect.stringContaining('does not exist'), code: 'NOT_FOUND' }],
      });
      const [row] = await t.sql('select name from customer where id = $1', [customer.id]);
      expect(row?.name).toBe('Hidden');
    });

    it('pages through customers with cursors, within the environment only', async () => {
      const pager = await t.createEnvironment('Pager');
      for (const name of ['A', 'B', 'C', 'D', 'E']) await createCustomer(pager, { name });
      const page = (after?: string) =>
        t.graphql(
          'query ($after: String) { customers(first: 2, after: $after) { edges { node { name } } pageInfo { hasNextPage endCursor } } }',
          { after },
          { env: pager },
        );

      const names: string[] = [];
      let after: string | undefined;
      for (;;) {
        const { customers } = (await page(after)).body.data;
        names.push(...customers.edges.map((edge: { node: { name: string } }) => edge.node.name));
        if (!customers.pageInfo.hasNextPage) break;
        after = customers.pageInfo.endCursor;
      }
      expect(names).toEqual(['A', 'B', 'C', 'D', 'E']);
    });

    it('refuses page sizes over 100 and foreign cursors', async () => {
      const big = await t.graphql('{ customers(first: 101) { edges { cursor } } }', {}, { env });
      expect(big.body.errors[0].extensions).toMatchObject({ code: 'INVALID_INPUT' });
      const bad = await t.graphql(
        '{ customers(after: "bm90LWEtY3Vyc29y") { edges { cursor } } }',
        {},
        { env },
      );
      expect(bad.body.errors[0].extensions).toMatchObject({ code: 'INVALID_INPUT' });
    });
  });

  describe('REST', () => {
    it('GET /customers/{id} answers exactly the contract’s fields', async () => {
      const { customer } = await createCustomer(env, {
        name: 'Contract',
        companyName: 'Contract Ltd',
        handle: 'contract',
        paymentTerm: 'net14',
      });
      const response = await t.rest('GET', `/customers/${customer.id}`, { env });

      expect(response.status).toBe(200);
      expect(Object.keys(response.body).sort()).toEqual(
        [
          'billingAddress',
          'collectionMode',
          'createdAt',
          'currency',
          'email',
          'handle',
          'id',
          'name',
          'paymentTerm',
          'updatedAt',
        ].sort(),
      );
      expect(response.body).toMatchObject({
        id: customer.id,
        name: 'Contract',
        handle: 'contract',
        updatedAt: null,
      });
      expect(Object.keys(response.body.billingAddress)).toEqual([
        'street1',
        'street2',
        'postalCode',
        'city',
        'county',
        'country',
        'state',
      ]);
    });

    it('PATCH applies present fields (the three the contract only shows too), clears nulls, leaves absent ones and ignores read-only fields', async () => {
      const { customer } = await createCustomer(env, {
        name: 'Patch me',
        handle: 'patch-me',
        email: 'p@example.com',
        currency: 'EUR',
        paymentTerm: 'net7',
      });
      const response = await t.rest('PATCH', `/customers/${customer.id}`, {
        env,
        body: {
          name: 'Patched',
          email: null,
          currency: 'sek',
          id: randomUUID(),
          createdAt: '2000-01-01T00:00:00Z',
          collectionMode: 'automatic',
        },
      });

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id: customer.id,
        name: 'Patched',
        handle: 'patch-me',
        email: null,
        currency: 'SEK',
        paymentTerm: 'net7',
        collectionMode: 'automatic',
        createdAt: customer.createdAt,
      });
      const [row] = await t.sql('select name, email, currency, company_name from customer where id = $1', [
        customer.id,
      ]);
      expect(row).toEqual({ name: 'Patched', email: null, currency: 'SEK', company_name: null });
    });

    it('PATCH sets billingAddress and paymentTerm, and refuses invalid values rather than ignoring them', async () => {
      const { customer } = await createCustomer(env, { name: 'Echo' });
      const read = await t.rest('GET', `/customers/${customer.id}`, { env });
      const echoed = {
        ...read.body,
        billingAddress: { ...read.body.billingAddress, city: 'Berlin', country: 'DE' },
        paymentTerm: 'net14',
      };
      const response = await t.rest('PATCH', `/customers/${customer.id}`, { env, body: echoed });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toMatchObject({
        billingAddress: { city: 'Berlin', country: 'DE', street1: null },
        paymentTerm: 'net14',
      });
      const invalid = await t.rest('PATCH', `/customers/${customer.id}`, {
        env,
        body: { name: 'Echo', collectionMode: 'bogus', paymentTerm: 5, billingAddress: { town: 'x' } },
      });
      expectProblem(invalid, 400);
      expect(invalid.body.errors.map((error: { pointer: string }) => error.pointer).sort()).toEqual([
        '/billingAddress/town',
        '/collectionMode',
        '/paymentTerm',
      ]);
      const [row] = await t.sql('select payment_term, collection_mode from customer where id = $1', [
        customer.id,
      ]);
      expect(row).toEqual({ payment_term: 'net14', collection_mode: 'send_invoice' });
    });

    it('PATCH that changes nothing keeps updatedAt and writes no event or audit entry', async () => {
      const { customer } = await createCustomer(env, { name: 'Still', email: 'still@example.com' });
      const count = async () =>
        (
          await t.sql(
            `select (select count(*)::int from event where object_id::text = $1) as events,
                    (select count(*)::int from audit_event where object_id::text = $1) as audits`,
            [customer.id],
          )
        )[0];
      const before = await count();
      const read = await t.rest('GET', `/customers/${customer.id}`, { env });
      const response = await t.rest('PATCH', `/customers/${customer.id}`, { env, body: read.body });
      expect(response.status).toBe(200);
      expect(response.body).toEqual(read.body);
      expect(await count()).toEqual(before);
    });

    it('PATCH accepts an internationalised e-mail address (RFC 6531)', async () => {
      const { customer } = await createCustomer(env, { name: 'Jörg' });
      const response = await t.rest('PATCH', `/customers/${customer.id}`, {
        env,
        body: { name: 'Jörg', email: 'jörg@bücher.de' },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.email).toBe('jörg@bücher.de');
    });

    it('PATCH requires name (the contract says so)', async () => {
      const { customer } = await createCustomer(env, { name: 'Needs name' });
      const response = await t.rest('PATCH', `/customers/${customer.id}`, {
        env,
        body: { email: 'x@example.com' },
      });
      expectProblem(response, 400);
      expect(response.body.errors).toEqual([{ pointer: '/name', detail: expect.any(String) }]);
    });

    it.each([
      [{ name: '' }, '/name'],
      [{ name: 'x', email: 'nope' }, '/email'],
      [{ name: 'x', currency: 'ABC' }, '/currency'],
      [{ name: 'x', handle: 42 }, '/handle'],
      [{ name: 'x', nickname: 'unknown field' }, '/nickname'],
    ])('PATCH %j answers 400 naming %s and changes nothing', async (body, pointer) => {
      const { customer } = await createCustomer(env, { name: 'Unchanged' });
      const response = await t.rest('PATCH', `/customers/${customer.id}`, { env, body });
      expectProblem(response, 400);
      expect(response.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual([pointer]);
      const [row] = await t.sql('select name, updated_at from customer where id = $1', [customer.id]);
      expect(row).toEqual({ name: 'Unchanged', updated_at: null });
    });

    it('PATCH with a handle another customer has answers 409', async () => {
      await createCustomer(env, { name: 'Holder', handle: 'taken' });
      const { customer } = await createCustomer(env, { name: 'Wants it' });
      const response = await t.rest('PATCH', `/customers/${customer.id}`, {
        env,
        body: { name: 'Wants it', handle: 'taken' },
      });
      expectProblem(response, 409);
      expect(response.body.errors).toEqual([{ pointer: '/handle', detail: expect.any(String) }]);
    });

    it('answers 404 for an unknown id and for another environment’s id, identically', async () => {
      const { customer } = await createCustomer(other, { name: 'Elsewhere' });
      const foreign = await t.rest('GET', `/customers/${customer.id}`, { env });
      const missing = await t.rest('GET', `/customers/${randomUUID()}`, { env });
      expectProblem(foreign, 404);
      expectProblem(missing, 404);
      expect(foreign.body.title).toBe(missing.body.title);

      const patch = await t.rest('PATCH', `/customers/${customer.id}`, { env, body: { name: 'Stolen' } });
      expectProblem(patch, 404);
      const [row] = await t.sql('select name from customer where id = $1', [customer.id]);
      expect(row?.name).toBe('Elsewhere');
    });

    it('answers 400 for an id that is not a UUID', async () => {
      const response = await t.rest('GET', '/customers/not-a-uuid', { env });
      expectProblem(response, 400);
      expect(response.body.errors).toEqual([{ pointer: '/customerId', detail: 'must be a UUID' }]);
    });

    it('a customer created through GraphQL reads the same through REST, and a REST patch shows in GraphQL', async () => {
      const { customer } = await createCustomer(env, {
        name: 'Parity',
        email: 'parity@example.com',
        currency: 'NOK',
      });
      const rest = (await t.rest('GET', `/customers/${customer.id}`, { env })).body;
      for (const key of [
        'id',
        'name',
        'handle',
        'email',
        'currency',
        'paymentTerm',
        'collectionMode',
        'createdAt',
      ]) {
        expect(rest[key]).toEqual(customer[key]);
      }
      await t.rest('PATCH', `/customers/${customer.id}`, { env, body: { name: 'Parity 2' } });
      const read = await t.graphql(
        'query ($id: UUID!) { customer(id: $id) { name } }',
        { id: customer.id },
        { env },
      );
      expect(read.body.data.customer.name).toBe('Parity 2');
    });
  });
});
