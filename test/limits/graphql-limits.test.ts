import { getIntrospectionQuery } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/http/body.ts';
import { GRAPHQL_LIMITS } from '../../src/limits/graphql-limits.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();

describe('GraphQL request limits', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment();
  });

  const rejection = async (query: string) => {
    const response = await t.graphql(query, {}, { env });
    expect(response.body.data).toBeUndefined();
    return response.body.errors[0].message as string;
  };

  it('accepts an ordinary query', async () => {
    const response = await t.graphql(
      '{ customers(first: 5) { edges { node { id billingAddress { city } } } pageInfo { hasNextPage } } }',
      {},
      { env },
    );
    expect(response.status).toBe(200);
    expect(response.body.errors).toBeUndefined();
  });

  it('lets GraphiQL and code generators introspect the whole schema', async () => {
    const response = await t.graphql(getIntrospectionQuery({ descriptions: true }), {}, { env });
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data.__schema.queryType.name).toBe('Query');
  });

  it(`refuses documents deeper than ${GRAPHQL_LIMITS.maxDepth}`, async () => {
    const nested = (levels: number): string => (levels === 0 ? 'name' : `ofType { ${nested(levels - 1)} }`);
    const message = await rejection(`{ __type(name: "Query") { fields { type { ${nested(10)} } } } }`);
    expect(message).toContain(`depth limit of ${GRAPHQL_LIMITS.maxDepth}`);
  });

  it(`refuses more than ${GRAPHQL_LIMITS.maxAliases} aliases`, async () => {
    const fields = Array.from(
      { length: GRAPHQL_LIMITS.maxAliases + 1 },
      (_, i) => `c${i}: customers(first: 1) { edges { cursor } }`,
    );
    expect(await rejection(`{ ${fields.join(' ')} }`)).toContain('Aliases limit');
  });

  it(`refuses documents of more than ${GRAPHQL_LIMITS.maxTokens} tokens`, async () => {
    expect(await rejection(`{ ${'__typename '.repeat(GRAPHQL_LIMITS.maxTokens)} }`)).toContain('Token limit');
  });

  it('refuses a document whose cost explodes through nested fragments', async () => {
    const fragments = [
      'fragment Page on Query { invoices(first: 100) { edges { node { items { id amount } } } } }',
      `fragment Pages on Query { ${'...Page '.repeat(16)}}`,
    ];
    expect(await rejection(`{ ...Pages } ${fragments.join(' ')}`)).toContain(
      `the limit is ${GRAPHQL_LIMITS.maxCost}`,
    );
  });

  it('does not suggest field names to a client guessing at the schema', async () => {
    const message = await rejection('{ customerz { edges { cursor } } }');
    expect(message).not.toContain('Did you mean');
  });

  it('refuses batched requests', async () => {
    const response = await t.rest('POST', '/graphql', {
      env,
      body: [{ query: '{ __typename }' }, { query: '{ __typename }' }],
    });
    expect(response.status).toBe(400);
  });

  it('refuses a body over 1 MiB with 413', async () => {
    const response = await t.rest('POST', '/graphql', {
      env,
      body: { query: `{ __typename } # ${'x'.repeat(MAX_BODY_BYTES)}` },
    });
    expect(response.status).toBe(413);
  });

  it('refuses a body that is not UTF-8 with 400, and runs nothing', async () => {
    // given a mutation whose string literal holds 0xC3 0x28, a lead byte followed by no continuation byte
    const query = 'mutation { customerCreate(input: { name: "Caf%BAD%" }) { customer { id } } }';
    const rawBody = Buffer.from(JSON.stringify({ query }).replace('%BAD%', '\u00c3('), 'latin1');

    // when
    const response = await t.rest('POST', '/graphql', { env, rawBody });

    // then
    expect(response.status).toBe(400);
    expect(response.body.data).toBeUndefined();
    expect(response.body.errors[0].message).toBe(
      'The request body is not valid UTF-8; encode its text as UTF-8.',
    );
    expect(await t.sql('select id from customer where environment_id = $1', [env.id])).toEqual([]);
  });

  describe('CSRF prevention', () => {
    const query = `/graphql?query=${encodeURIComponent('{ __typename }')}`;

    it('refuses a GET without the CSRF header, which a browser could send cross-site without a preflight', async () => {
      expect((await t.rest('GET', query, { env })).status).toBe(403);
      const allowed = await t.rest('GET', query, { env, headers: { 'x-graphql-yoga-csrf': '1' } });
      expect(allowed.status).toBe(200);
      expect(allowed.body.data).toEqual({ __typename: 'Query' });
    });

    it('refuses a text/plain POST without the CSRF header', async () => {
      const response = await t.rest('POST', '/graphql', {
        env,
        rawBody: JSON.stringify({ query: '{ __typename }' }),
        headers: { 'content-type': 'text/plain' },
      });
      expect(response.status).toBe(403);
    });
  });
});
