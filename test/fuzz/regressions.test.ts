import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_INPUT_DEPTH } from '../../src/validation.ts';
import { gql, pointers } from '../support/catalog.ts';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';

/** Requests the fuzzer found mishandled (a 500, an existing id answering 404), kept as plain examples on both faces. */
const t = setupTestApp();

let env: TestEnvironment;
let customerId: string;

const nested = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

const counts = () =>
  t.sql(
    `select (select count(*) from customer)::int as customers, (select count(*) from invoice)::int as invoices,
       (select count(*) from price)::int as prices, (select count(*) from idempotency_key)::int as keys,
       (select count(*) from audit_event)::int as audit, (select max(xmin::text::bigint) from customer) as version`,
  );

beforeAll(async () => {
  env = await t.createEnvironment('Regressions');
  const data = await gql(
    t,
    env,
    'mutation { customerCreate(input: { name: "Kept", currency: "EUR" }) { customer { id } } }',
  );
  customerId = data.customerCreate.customer.id;
});

describe('REST', () => {
  it('answers 400 for a path id with a malformed percent escape', async () => {
    for (const id of ['%', '%zz', '%E2%82']) {
      const read = await t.rest('GET', `/customers/${id}`, { env });
      expectProblem(read, 400);
      expect(pointers(read)).toEqual(['/customerId']);
      expectProblem(await t.rest('PATCH', `/customers/${id}`, { env, body: { name: 'x' } }), 400);
    }
  });

  it('finds an object by its id written in uppercase, in the path and in the body', async () => {
    const upper = customerId.toUpperCase();
    const read = await t.rest('GET', `/customers/${upper}`, { env });
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(customerId);
    const invoice = await t.rest('POST', '/invoices', {
      env,
      body: { customerId: upper, currency: null, date: '2026-03-01', items: null },
    });
    expect(invoice.status, JSON.stringify(invoice.body)).toBe(201);
    expect(invoice.body.customer.id).toBe(customerId);
    const again = await t.rest('GET', `/invoices/${invoice.body.id.toUpperCase()}`, { env });
    expect(again.body.id).toBe(invoice.body.id);
  });

  it('refuses text PostgreSQL cannot store, naming each field, and stores nothing', async () => {
    // given the state before
    const before = await counts();

    // when strings carry a NUL character or an unpaired surrogate, as values or as keys
    const patch = await t.rest('PATCH', `/customers/${customerId}`, {
      env,
      body: { name: 'a\u0000b', email: 'x@example.com', handle: '\ud800' },
    });
    const post = await t.rest('POST', '/invoices', {
      env,
      headers: { 'idempotency-key': 'nul-in-items' },
      body: {
        customerId,
        currency: null,
        date: '2026-03-01',
        items: [{ quantity: 1, unitAmount: 1, 'ti\u0000tle': 'x' }],
      },
    });

    // then each is a 400 naming the offending fields, and nothing changed
    expectProblem(patch, 400);
    expect(patch.body.errors).toEqual([
      { pointer: '/name', detail: 'must not contain the NUL character (U+0000)' },
      { pointer: '/handle', detail: 'must be Unicode text, without unpaired surrogates' },
    ]);
    expectProblem(post, 400);
    expect(pointers(post)).toEqual(['/items/0/ti\u0000tle']);
    expect(await counts()).toEqual(before);
    const read = await t.rest('GET', `/customers/${customerId}`, { env });
    expect(read.body.name).toBe('Kept');
  });

  it(`answers 400 for a body nesting deeper than ${MAX_INPUT_DEPTH} levels, with or without an Idempotency-Key`, async () => {
    const before = await counts();
    for (const depth of [MAX_INPUT_DEPTH, 100_000]) {
      const post = await t.rest('POST', '/invoices', {
        env,
        headers: { 'idempotency-key': `deep-${depth}` },
        rawBody: `{"customerId": ${nested(depth)}}`,
      });
      expectProblem(post, 400);
      expect(pointers(post)).toEqual([`/customerId${'/0'.repeat(MAX_INPUT_DEPTH - 1)}`]);
      expectProblem(await t.rest('PUT', `/prices/${customerId}`, { env, rawBody: nested(depth) }), 400);
    }
    expect(await counts()).toEqual(before);
  });

  it('still accepts a body nested as deep as the honest ones', async () => {
    const response = await t.rest('POST', '/prices', {
      env,
      body: {
        name: 'Tiers',
        termUnit: 'month',
        termCount: 1,
        purchase: 'recurring',
        priceModel: 'volume',
        method: 'advance',
        pricing: { eur: { tiers: [{ upTo: null, unitAmount: 5 }] } },
      },
    });
    expect(response.status).toBe(201);
  });
});

describe('GraphQL', () => {
  const CREATE =
    'mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } } }';

  it('finds an object by its id written in uppercase, as a literal or a variable', async () => {
    const upper = customerId.toUpperCase();
    const literal = await gql(t, env, `{ customer(id: "${upper}") { id } }`);
    const variable = await gql(t, env, 'query ($id: UUID!) { customer(id: $id) { id } }', { id: upper });
    expect([literal.customer, variable.customer]).toEqual([{ id: customerId }, { id: customerId }]);
  });

  it('refuses NUL characters in variables and in literals as INVALID_INPUT, storing nothing', async () => {
    const before = await counts();
    const variable = await t.graphql(CREATE, { input: { name: 'a\u0000b' } }, { env });
    const literal = await t.graphql(
      'mutation { customerCreate(input: { name: "ok", billingAddress: { city: "a\\u0000b" } }) { customer { id } } }',
      {},
      { env },
    );
    const query = await t.graphql('{ taxCode(code: "VAT\\u0000") { code } }', {}, { env });
    for (const response of [variable, literal, query]) {
      expect(response.body.data ?? null).toBeNull();
      expect(response.body.errors[0].extensions.code).toBe('INVALID_INPUT');
    }
    expect(variable.body.errors[0].extensions.errors).toEqual([
      { pointer: '/input/name', detail: 'must not contain the NUL character (U+0000)' },
    ]);
    expect(literal.body.errors[0].extensions.errors[0].pointer).toBe('/input/billingAddress/city');
    expect(await counts()).toEqual(before);
  });

  it('refuses too deeply nested variables, also under an Idempotency-Key', async () => {
    const before = await counts();
    const response = await t.rest('POST', '/graphql', {
      env,
      headers: { 'idempotency-key': 'deep-graphql' },
      rawBody: JSON.stringify({
        query: `mutation ($input: PriceCreateInput!) { priceCreate(input: $input) { price { id } } }`,
        variables: { input: { name: 'Deep', pricing: { eur: 'DEEP' } } },
      }).replace('"DEEP"', nested(100_000)),
    });
    expect(response.body.errors[0].extensions.code).toBe('INVALID_INPUT');
    expect(await counts()).toEqual(before);
  });
});
