import { randomBytes, randomUUID } from 'node:crypto';
import {
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLOutputType,
  getNamedType,
  getNullableType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';
import { routes } from '../../src/modules/registry.ts';
import { setupTestApp, type TestResponse } from '../support/harness.ts';
import { moduleCases } from '../support/module-cases.ts';
import {
  type MarkedEnvironment,
  type Shared,
  type Target,
  tenantFixtures,
  tenantTables,
} from './fixtures.ts';

/**
 * Two environments × every REST route and every GraphQL root field × {own, other environment's,
 * random} reference. An own reference works; another environment's answers exactly like a random one
 * (same status, same problem or userErrors, the reference aside), writes nothing anywhere, and no
 * answer carries anything of the other environment. New routes and fields fail the coverage test until
 * they have cases here.
 */

const t = setupTestApp();
const f = tenantFixtures(t);

const REST_CASES = moduleCases.rest;
const GRAPHQL_CASES = moduleCases.graphql;

/** Whether an argument of this type can carry an id, directly or inside an input object. */
function carriesId(type: GraphQLInputType, seen = new Set<string>()): boolean {
  const named = getNamedType(type);
  if (named.name === 'UUID' || named.name === 'ID') return true;
  if (!isInputObjectType(named) || seen.has(named.name)) return false;
  seen.add(named.name);
  return Object.values(named.getFields()).some((field) => carriesId(field.type, seen));
}

/** Whether a field holds many: a list, or a connection (which takes `first`). */
const holdsMany = (field: GraphQLField<unknown, unknown>) =>
  field.name !== 'edges' &&
  (isListType(getNullableType(field.type)) || field.args.some((arg) => arg.name === 'first'));

/**
 * Every field of the result, nested objects and connections included, down to `depth` levels. Below
 * the root field, one list at most (a page's rows and their lines): the query cost limit refuses more,
 * and each list type is still selected by some root field.
 */
function selectionOf(type: GraphQLOutputType, depth: number, lists = 0): string {
  const named = getNamedType(type);
  if (isLeafType(named)) return '';
  if (!isObjectType(named) || depth === 0) return ' { __typename }';
  const fields = Object.values(named.getFields()).filter(
    (field) => field.args.every((arg) => !isNonNullType(arg.type)) && !(holdsMany(field) && lists >= 1),
  );
  return ` { ${fields
    .map((field) => field.name + selectionOf(field.type, depth - 1, lists + (holdsMany(field) ? 1 : 0)))
    .join(' ')} }`;
}

function documentFor(
  operation: 'query' | 'mutation',
  field: GraphQLField<unknown, unknown>,
  names: string[],
) {
  const args = field.args.filter((arg) => names.includes(arg.name));
  const declarations = args.map((arg) => `$${arg.name}: ${String(arg.type)}`).join(', ');
  const passed = args.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  return `${operation}${declarations ? ` (${declarations})` : ''} { ${field.name}${passed ? `(${passed})` : ''}${selectionOf(field.type, 5)} }`;
}

const rootFields = (operation: 'Query' | 'Mutation') => {
  const type = operation === 'Query' ? schema.getQueryType() : schema.getMutationType();
  return Object.values(type?.getFields() ?? {});
};

const missingRef = (target: Target) =>
  target === 'taxCode'
    ? `VAT-random-${randomBytes(4).toString('hex')}`
    : target === 'productHandle' || target === 'customerHandle'
      ? `random-${randomBytes(4).toString('hex')}`
      : randomUUID();

let a: MarkedEnvironment;
let b: MarkedEnvironment;
let tables: string[];
const shared = new Map<string, Shared>();

beforeAll(async () => {
  a = await f.createEnvironment('A');
  b = await f.createEnvironment('B');
  shared.set(a.id, await f.populate(a));
  shared.set(b.id, await f.populate(b));
  tables = await tenantTables(t);
}, 120_000);

/** Every tenant row of the environments, as JSON text, in a stable order. */
async function rowsOf(...environments: MarkedEnvironment[]): Promise<string[]> {
  const union = tables
    .map(
      (table) =>
        `select to_jsonb(r)::text as row from ${pg.escapeIdentifier(table)} r where environment_id = any($1)`,
    )
    .join(' union all ');
  const rows = await t.sql<{ row: string }>(`select row from (${union}) rows order by row`, [
    environments.map((env) => env.id),
  ]);
  return rows.map((row) => `${row.row}`);
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Asserts the answer shows nothing of `other`: none of the ids in its rows, not its marker. */
function expectNoLeak(response: TestResponse, other: MarkedEnvironment, otherRows: string[], sent?: string) {
  let text = JSON.stringify(response.body);
  if (sent) text = text.replaceAll(sent, '<ref>');
  const theirs = new Set([other.id, ...otherRows.flatMap((row) => row.match(UUID) ?? [])]);
  const leaked = [...theirs].filter((id) => text.includes(id));
  if (text.includes(other.marker)) leaked.push(other.marker);
  expect(leaked, `answer carries data of the other environment: ${text}`).toEqual([]);
}

/** The answer with the reference sent in it replaced, so a foreign and a random reference compare. */
const normalized = (response: TestResponse, ref: string) => ({
  status: response.status,
  contentType: response.headers.get('content-type'),
  body: JSON.parse(JSON.stringify(response.body).replaceAll(ref, '<ref>')),
});

/**
 * Runs one case from `me`'s side: the own reference must work and leave `other` alone; the foreign one
 * must answer like the random one and leave both environments alone.
 */
async function runCase(
  me: MarkedEnvironment,
  other: MarkedEnvironment,
  target: Target | undefined,
  send: (ref: string) => Promise<TestResponse>,
  expectWorked: (response: TestResponse) => void,
  expectRefused: (response: TestResponse) => void,
) {
  const own = shared.get(me.id) as Shared;
  const otherBefore = await rowsOf(other);
  const ownRef = target ? await f.create(target, me, own) : '';
  const worked = await send(ownRef);
  expectWorked(worked);
  expectNoLeak(worked, other, otherBefore);
  expect(await rowsOf(other), 'the own request changed rows of the other environment').toEqual(otherBefore);
  if (!target) return;

  const foreignRef = (shared.get(other.id) as Shared)[target];
  const randomRef = missingRef(target);
  const before = await rowsOf(me, other);
  const foreign = await send(foreignRef);
  expect(await rowsOf(me, other), 'a request naming a foreign object wrote').toEqual(before);
  const random = await send(randomRef);
  expect(await rowsOf(me, other), 'a request naming a missing object wrote').toEqual(before);

  expect(normalized(foreign, foreignRef)).toEqual(normalized(random, randomRef));
  expectRefused(foreign);
  expectNoLeak(foreign, other, otherBefore, foreignRef);
}

it('has cases for every REST route, every Query field and every Mutation field that takes an id', () => {
  const routeKeys = routes.map((route) => `${route.method} ${route.path}`);
  const required = [
    ...routeKeys,
    ...rootFields('Query').map((field) => `Query.${field.name}`),
    ...rootFields('Mutation')
      .filter((field) => field.args.some((arg) => carriesId(arg.type)))
      .map((field) => `Mutation.${field.name}`),
  ];
  const cases = [...Object.keys(REST_CASES), ...Object.keys(GRAPHQL_CASES)];
  expect(
    required.filter((key) => !cases.includes(key)),
    'add cases for these to the isolation matrix',
  ).toEqual([]);
  const known = new Set([
    ...routeKeys,
    ...rootFields('Query').map((field) => `Query.${field.name}`),
    ...rootFields('Mutation').map((field) => `Mutation.${field.name}`),
  ]);
  expect(cases.filter((key) => !known.has(key))).toEqual([]);
});

const perspectives = [
  { name: 'A', me: () => a, other: () => b },
  { name: 'B', me: () => b, other: () => a },
];

describe.each(perspectives)('from environment $name', ({ me, other }) => {
  describe('REST', () => {
    const cases = routes.flatMap((route) =>
      (REST_CASES[`${route.method} ${route.path}`] ?? []).map((restCase, index) => ({
        name: `${route.method} ${route.path} #${index + 1}${restCase.target ? ` naming a ${restCase.target}` : ''}`,
        route,
        restCase,
      })),
    );
    it.each(cases)('$name', async ({ route, restCase }) => {
      const send = (ref: string) => {
        const { path, body } = restCase.request(ref, shared.get(me().id) as Shared, me());
        return t.rest(route.method, path, { env: me(), body });
      };
      await runCase(
        me(),
        other(),
        restCase.target,
        send,
        (response) => expect(response.status, JSON.stringify(response.body)).toBeLessThan(300),
        (response) => expect(response.status).toBeGreaterThanOrEqual(400),
      );
    });
  });

  describe('GraphQL', () => {
    const cases = (['Query', 'Mutation'] as const).flatMap((operation) =>
      rootFields(operation).flatMap((field) =>
        (GRAPHQL_CASES[`${operation}.${field.name}`] ?? []).map((graphqlCase, index) => ({
          name: `${operation}.${field.name} #${index + 1}${graphqlCase.target ? ` naming a ${graphqlCase.target}` : ''}`,
          operation,
          field,
          graphqlCase,
        })),
      ),
    );
    it.each(cases)('$name', async ({ operation, field, graphqlCase }) => {
      const send = (ref: string) => {
        const variables = graphqlCase.args(ref, shared.get(me().id) as Shared);
        const document = documentFor(
          operation === 'Query' ? 'query' : 'mutation',
          field,
          Object.keys(variables),
        );
        return t.graphql(document, variables, { env: me() });
      };
      const answer = (response: TestResponse) => response.body.data?.[field.name];
      await runCase(
        me(),
        other(),
        graphqlCase.target,
        send,
        (response) => {
          expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
          if (operation === 'Mutation') expect(answer(response).userErrors).toEqual([]);
          else if (graphqlCase.target) expect(answer(response)).not.toBeNull();
        },
        (response) => {
          const value = answer(response);
          if (operation === 'Mutation') {
            expect(Boolean(response.body.errors) || value.userErrors.length > 0).toBe(true);
          } else {
            // Nothing: null, an empty page, or (`nodes`) null for every id.
            const nothing = Array.isArray(value) ? value.every((item) => item === null) : value === null;
            expect(nothing || value.edges?.length === 0).toBe(true);
          }
        },
      );
    });
  });
});
