import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type GraphQLEnumType, type GraphQLObjectType, getNamedType } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { DOMAIN_ERROR_CODES } from '../../src/errors.ts';
import { schema } from '../../src/graphql/schema.ts';
import { GRAPHQL_LIMITS } from '../../src/limits/graphql-limits.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const SRC = new URL('../../src/', import.meta.url).pathname;
const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );

/** Codes as the source writes them: `code: 'X'` (problems, extensions) and the limits' `coded('X')`/`withCode(…, 'X')`. */
function codesInSource(): Set<string> {
  const codes = new Set<string>(DOMAIN_ERROR_CODES);
  const patterns = [
    /\bcode: '([A-Z][A-Z_]+)'/g,
    /\bcoded\('([A-Z][A-Z_]+)'\)/g,
    /withCode\(\w+, '([A-Z][A-Z_]+)'\)/g,
  ];
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of patterns) for (const match of text.matchAll(pattern)) codes.add(match[1] as string);
  }
  // A Node.js system error code the webhook sender fakes for its resolver, not an API error code.
  codes.delete('ENOTFOUND');
  return codes;
}

const documented = () => {
  const table = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  return new Set([...table.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1] as string));
};

describe('the error model', () => {
  it('documents every code the source uses in the one table of docs/errors.md', () => {
    const codes = codesInSource();
    expect(codes.size).toBeGreaterThan(25);
    expect([...codes].filter((code) => !documented().has(code))).toEqual([]);
  });

  it('lists every code a service refuses with in the UserErrorCode enum, with a description each', () => {
    const code = schema.getType('UserErrorCode') as GraphQLEnumType;
    const values = code.getValues();
    expect(values.map((value) => value.name).sort()).toEqual([...DOMAIN_ERROR_CODES].sort());
    expect(values.filter((value) => !value.description)).toEqual([]);
    const userError = schema.getType('UserError') as GraphQLObjectType;
    expect(getNamedType(userError.getFields().code?.type)).toBe(code);
  });
});

describe('codes on the wire', () => {
  const t = setupTestApp();
  let env: TestEnvironment;
  let reader: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment();
    reader = await t.createEnvironment('Reader', { scope: 'read' });
  });

  const firstError = async (query: string, variables: Record<string, unknown> = {}) => {
    const response = await t.graphql(query, variables, { env });
    return { status: response.status, error: response.body.errors?.[0] };
  };

  it('answers a business outcome as a coded userError, and input of the wrong shape as INVALID_INPUT with pointers', async () => {
    const response = await t.graphql(
      `mutation { customerUpdate(id: "${randomUUID()}", input: { name: "Ada" }) { customer { id } userErrors { field code } } }`,
      {},
      { env },
    );
    expect(response.body.data.customerUpdate).toEqual({
      customer: null,
      userErrors: [{ field: null, code: 'NOT_FOUND' }],
    });
    const invalid = await firstError(
      'mutation { customerCreate(input: { name: "", currency: "EUR" }) { customer { id } } }',
    );
    expect(invalid.error.extensions).toEqual({
      code: 'INVALID_INPUT',
      errors: [{ pointer: '/input/name', detail: expect.any(String) }],
    });
  });

  it('refuses documents past each limit with a code of its own, not a bare syntax error', async () => {
    const nested = (levels: number): string => (levels === 0 ? 'name' : `ofType { ${nested(levels - 1)} }`);
    const deep = await firstError(`{ __type(name: "Query") { fields { type { ${nested(10)} } } } }`);
    expect(deep.status).toBe(400);
    expect(deep.error.extensions.code).toBe('QUERY_TOO_DEEP');
    expect(deep.error.message).not.toContain('Syntax Error');

    const aliases = Array.from(
      { length: GRAPHQL_LIMITS.maxAliases + 1 },
      (_, i) => `a${i}: customers(first: 1) { edges { cursor } }`,
    );
    expect((await firstError(`{ ${aliases.join(' ')} }`)).error.extensions.code).toBe('TOO_MANY_ALIASES');
    const tokens = await firstError(`{ ${'__typename '.repeat(GRAPHQL_LIMITS.maxTokens)} }`);
    expect(tokens.error.extensions.code).toBe('TOO_MANY_TOKENS');
    const directives = await firstError(
      `{ __typename ${'@skip(if: false) '.repeat(GRAPHQL_LIMITS.maxDirectives + 1)}}`,
    );
    expect(directives.error.extensions.code).toBe('TOO_MANY_DIRECTIVES');
    const fragments = [
      'fragment Page on Query { invoices(first: 100) { edges { node { items { id amount } } } } }',
      `fragment Pages on Query { ${'...Page '.repeat(16)}}`,
    ];
    const costly = await firstError(`{ ...Pages } ${fragments.join(' ')}`);
    expect(costly.error.extensions.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('codes parse, validation and variable errors', async () => {
    expect((await firstError('{ customers')).error.extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect((await firstError('{ customerz }')).error.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const variables = await firstError('query($n: Int!) { customers(first: $n) { edges { cursor } } }', {
      n: 'ten',
    });
    expect(variables.error.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('codes a mutation refused for its scope', async () => {
    const response = await t.graphql(
      'mutation { customerCreate(input: { name: "Ada", currency: "EUR" }) { customer { id } } }',
      {},
      { env: reader },
    );
    expect(response.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it('answers an authentication refusal on /graphql as a problem that also carries errors[].extensions.code', async () => {
    const response = await t.graphql('{ __typename }', {}, { headers: { 'x-environment': env.id } });
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.body.code).toBe('UNAUTHENTICATED');
    expect(response.body.errors).toEqual([
      {
        message: 'Send an API token as Authorization: Bearer <token>.',
        extensions: { code: 'UNAUTHENTICATED' },
      },
    ]);
  });

  it('tells a client sending GET without the CSRF header what to send', async () => {
    const response = await t.rest('GET', `/graphql?query=${encodeURIComponent('{ __typename }')}`, { env });
    expect(response.status).toBe(403);
    const [error] = response.body.errors;
    expect(error.extensions).toMatchObject({ code: 'CSRF_HEADER_REQUIRED', header: 'x-graphql-yoga-csrf' });
    expect(error.message).toContain('x-graphql-yoga-csrf');
    expect(error.message).toContain('Content-Type: application/json');
  });

  it('codes a REST problem', async () => {
    const response = await t.rest('GET', '/nowhere', { env });
    expect(response.body).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });
});
