import { randomUUID } from 'node:crypto';
import {
  type GraphQLInputType,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
} from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { AccessService } from '../../src/auth/access.service.ts';
import { schema } from '../../src/graphql/schema.ts';
import { routes } from '../../src/modules/registry.ts';
import { tenantTables } from '../security/fixtures.ts';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();

/**
 * A value of `type` that GraphQL and the input's rules accept (those are checked first: input that
 * breaks them is INVALID_INPUT whoever sends it, and reveals nothing).
 */
function sample(type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return sample(type.ofType);
  if (isListType(type)) return [sample(type.ofType)];
  if (isEnumType(type)) return type.getValues()[0]?.name;
  if (isInputObjectType(type)) {
    return Object.fromEntries(
      Object.values(type.getFields())
        .filter((field) => isNonNullType(field.type))
        // A URL field gets a URL: input that fails validation is answered before the scope is checked.
        .map((field) => [field.name, field.name === 'url' ? 'https://example.com/hook' : sample(field.type)]),
    );
  }
  const scalars: Record<string, unknown> = {
    UUID: randomUUID(),
    Int: 1,
    SafeInt: 1,
    Float: 1,
    Boolean: true,
    Date: '2026-01-01',
    DateTime: '2026-01-01T00:00:00.000Z',
    JSONObject: {},
  };
  return getNamedType(type).name in scalars ? scalars[getNamedType(type).name] : 'x';
}

const mutationFields = Object.values(schema.getMutationType()?.getFields() ?? {});
const writeRoutes = routes.filter((route) => route.method !== 'GET');

describe('token scopes', () => {
  let env: TestEnvironment;
  let reader: Record<string, string>;
  let customerId: string;
  let tables: string[];

  beforeAll(async () => {
    env = await t.createEnvironment();
    const { secret } = await new AccessService(t.adminOrm.em.fork()).createToken([env.id], 'reader', 'read');
    reader = { authorization: `Bearer ${secret}`, 'x-environment': env.id };
    const created = await t.graphql(
      'mutation { customerCreate(input: { name: "Ada", currency: "EUR" }) { customer { id } } }',
      {},
      { env },
    );
    customerId = created.body.data.customerCreate.customer.id;
    tables = await tenantTables(t);
  });

  /** Every row of the environment, in every tenant table: a refused request must change none. */
  const rowsOfEnvironment = async () =>
    t.sql(
      `select ${tables.map((table) => `(select count(*) from ${table} where environment_id = $1)::int as ${table}`).join(', ')}`,
      [env.id],
    );

  it('lets a read token query both faces', async () => {
    const query = await t.graphql(
      `query ($id: UUID!) { environment { id kind } customer(id: $id) { name } }`,
      { id: customerId },
      { headers: reader },
    );
    expect(query.status).toBe(200);
    expect(query.body).toEqual({
      data: { environment: { id: env.id, kind: 'live' }, customer: { name: 'Ada' } },
    });
    const read = await t.rest('GET', `/customers/${customerId}`, { headers: reader });
    expect(read.status).toBe(200);
    expect(read.body.name).toBe('Ada');
  });

  it.each(mutationFields.map((field) => [field.name, field] as const))(
    'refuses Mutation.%s to a read token with 403 naming the write scope',
    async (name, field) => {
      // given a mutation whose arguments GraphQL accepts
      const args = field.args.filter((arg) => isNonNullType(arg.type));
      const declarations = args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
      const passed = args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
      const document = `mutation${declarations ? `(${declarations})` : ''} { ${name}${passed ? `(${passed})` : ''} { __typename } }`;
      const variables = Object.fromEntries(args.map((arg) => [arg.name, sample(arg.type)]));
      const before = await rowsOfEnvironment();

      // when a read token sends it
      const response = await t.graphql(document, variables, { headers: reader });

      // then it is refused, and nothing was written
      expect(response.status).toBe(403);
      expect(response.body.data).toEqual({ [name]: null });
      expect(response.body.errors).toEqual([
        expect.objectContaining({
          message: `Mutation.${name} needs an API token with the write scope; this token has the read scope.`,
          path: [name],
          extensions: expect.objectContaining({ code: 'FORBIDDEN' }),
        }),
      ]);
      expect(await rowsOfEnvironment()).toEqual(before);
    },
  );

  it.each(writeRoutes.map((route) => [`${route.method} ${route.path}`, route] as const))(
    'refuses %s to a read token with a 403 problem naming the write scope',
    async (operation, route) => {
      const before = await rowsOfEnvironment();
      const path = route.path.replace(/\{\w+\}/g, () => customerId);

      const response = await t.rest(route.method, path, {
        headers: { ...reader, 'idempotency-key': randomUUID() },
        body: {},
      });

      expectProblem(response, 403);
      expect(response.body).toMatchObject({
        code: 'FORBIDDEN',
        detail: `${operation} needs an API token with the write scope; this token has the read scope.`,
      });
      expect(await rowsOfEnvironment()).toEqual(before);
    },
  );

  it('lets a write token (the default) write', async () => {
    const response = await t.rest('PATCH', `/customers/${customerId}`, { env, body: { name: 'Ada L.' } });
    expect(response.status).toBe(200);
  });
});
