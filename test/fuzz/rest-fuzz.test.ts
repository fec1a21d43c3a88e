import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEM_CONTENT_TYPE } from '../../src/http/problem.ts';
import { routes } from '../../src/modules/registry.ts';
import type { Route } from '../../src/rest/router.ts';
import type { FuzzFixtures } from '../support/cases.ts';
import { createLedgerAccount, createProduct, createTaxCode, gql } from '../support/catalog.ts';
import { setupTestApp, type TestEnvironment, type TestResponse } from '../support/harness.ts';
import { moduleCases } from '../support/module-cases.ts';

/**
 * Property-based fuzzing of every REST operation in `routes`: hostile, malformed and near-valid
 * requests never get a 5xx, every refusal is problem details whose `status` is the HTTP status (the
 * harness also checks each response against the OpenAPI document), and a refused request writes
 * nothing. A failure prints the seed and the shrunk request; `FUZZ_SEED=<seed>` replays it.
 */
const t = setupTestApp();

// A fixed seed keeps `npm test` reproducible; `FUZZ_SEED` explores others, `FUZZ_RUNS` goes deeper or faster.
const RUNS_PER_OPERATION = Number(process.env.FUZZ_RUNS ?? 1000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261125);

type Fixtures = FuzzFixtures;

const operationOf = (route: Pick<Route, 'method' | 'path'>) => `${route.method} ${route.path}`;

/**
 * A valid body for every operation that takes one (each module's cases file has them); the fuzzer mutates
 * it into near-valid bodies. An operation with a body but no example fails the suite, so every new
 * operation is fuzzed.
 */
const EXAMPLE_BODIES = moduleCases.fuzzBodies;

/** An existing id for each path parameter: the fuzzer mixes it with random UUIDs and garbage. */
const EXISTING_IDS = moduleCases.existingIds;

const TAKEN = 'fuzz-taken';

const pathParams = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);

/**
 * Creates one of everything the examples and path ids refer to, in `env`, and a customer and a
 * product holding the handle TAKEN, so that a body sending it meets a uniqueness conflict.
 */
async function createFixtures(env: TestEnvironment): Promise<Fixtures> {
  await createTaxCode(t, env, { code: 'VAT25', rate: 25 });
  const product = await createProduct(t, env, { name: 'Requests', handle: 'fuzz-product', taxCode: 'VAT25' });
  await createProduct(t, env, { name: 'Taken', handle: TAKEN });
  const { customerCreate } = await gql(
    t,
    env,
    `mutation {
      customerCreate(input: { name: "Fuzz Customer", currency: "EUR" }) { customer { id } }
      taken: customerCreate(input: { name: "Taken", handle: "${TAKEN}" }) { customer { id } }
    }`,
  );
  const customerId = customerCreate.customer.id as string;
  const accounts = await Promise.all(
    ['Sales', 'Income', 'Tax', 'Deferral'].map((name, index) =>
      createLedgerAccount(t, env, { name, accountingCode: String(4000 + index) }),
    ),
  );
  const accountIds = accounts.map((account) => account.id as string) as Fixtures['accountIds'];
  const ids = { customerId, productId: product.id as string, accountIds };
  const pending = { priceId: '', invoiceId: '', subscriptionId: '', accountSetId: '' };
  const price = await t.rest('POST', '/prices', {
    env,
    body: EXAMPLE_BODIES['POST /prices']?.({ ...ids, ...pending }),
  });
  const invoice = await t.rest('POST', '/invoices', {
    env,
    body: EXAMPLE_BODIES['POST /invoices']?.({ ...ids, ...pending }),
  });
  const accountSet = await t.rest('POST', '/accountsets', {
    env,
    body: EXAMPLE_BODIES['POST /accountsets']?.({ ...ids, ...pending }),
  });
  expect([price.status, invoice.status, accountSet.status]).toEqual([201, 201, 201]);
  const { subscriptionCreate } = await gql(
    t,
    env,
    `mutation ($input: SubscriptionCreateInput!) {
      subscriptionCreate(input: $input) { subscription { id } userErrors { message } }
    }`,
    {
      input: {
        customerId,
        term: { start: '2026-01-01' },
        items: [{ productId: ids.productId, priceId: price.body.id, quantity: 1 }],
      },
    },
  );
  expect(subscriptionCreate.userErrors).toEqual([]);
  return {
    ...ids,
    priceId: price.body.id,
    invoiceId: invoice.body.id,
    subscriptionId: subscriptionCreate.subscription.id,
    accountSetId: accountSet.body.id,
  };
}

// ---- generators ----------------------------------------------------------------------------------

const RAW = Symbol('raw JSON text');
/**
 * JSON text written into the body as it is: number literals no JavaScript number can hold, and huge
 * or deeply nested values, which a failure report shows abbreviated.
 */
type Raw = { [RAW]: string; [fc.toStringMethod]: () => string };
const raw = (text: string): Raw => ({
  [RAW]: text,
  [fc.toStringMethod]: () =>
    text.length <= 80
      ? `raw(${text})`
      : `raw(${text.slice(0, 30)}…${text.slice(-30)}, ${text.length} characters)`,
});
const isRaw = (value: unknown): value is Raw => typeof value === 'object' && value !== null && RAW in value;

/** JSON text of a generated value; unlike JSON.stringify it keeps raw literals and `__proto__` keys. */
function toJsonText(value: unknown): string {
  if (isRaw(value)) return value[RAW];
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const members = Object.entries(value).map(
      ([key, member]) => `${JSON.stringify(key)}:${toJsonText(member)}`,
    );
    return `{${members.join(',')}}`;
  }
  // undefined: the whole body was removed.
  return JSON.stringify(value) ?? '';
}

/** An object with exactly these own keys, `__proto__` included (assignment would set the prototype). */
function objectOf(entries: [string, unknown][]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return object;
}

const TRICKY_STRINGS = [
  '',
  ' ',
  ' \t\n ',
  'null',
  'true',
  '0',
  '-1',
  '1e400',
  'NaN',
  'EUR',
  'eur',
  'XXX',
  ' usd ',
  '2026-02-29',
  '2024-02-29',
  '0000-01-01',
  '0001-01-01',
  '9999-12-31',
  '+010000-01-01',
  '2026-13-01',
  '2026-03-01T00:00:00Z',
  'net30',
  'net1000',
  'fee',
  'volume',
  'even_distribution',
  'fuzz-product',
  TAKEN,
  'VAT25',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF',
  "'; drop table invoice; --",
  '<script>alert(1)</script>',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '\u202eevil',
  '\ufeffBOM',
  'e\u0301',
  '𝕳𝖊𝖑𝖑𝖔',
  '👩‍👩‍👧‍👦',
  '%s%n',
  '{{7*7}}',
  '../../etc/passwd',
  'a@b',
  '"quoted"',
  '\\',
];

const hugeString = fc
  .tuple(fc.constantFrom('x', 'é', '💶', ' ', '9'), fc.constantFrom(65, 251, 401, 4001, 65_536, 300_000))
  .map(([character, length]) => raw(JSON.stringify(character.repeat(length))));

const anyString: fc.Arbitrary<string | Raw> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 3, arbitrary: fc.constantFrom(...TRICKY_STRINGS) },
  { weight: 1, arbitrary: hugeString },
);

const anyNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    0,
    -0,
    1,
    -1,
    0.5,
    0.1,
    1e-7,
    100,
    100.00001,
    10_001,
    2 ** 31,
    2 ** 53 - 1,
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 53),
    1e21,
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    Number.MIN_VALUE,
    123456789.12345679,
  ),
  fc
    .constantFrom(
      '1e400',
      '-1e400',
      '1e-400',
      '123456789012345678901234567890',
      '0.10000000000000000000001',
      '-0.0',
    )
    .map(raw),
);

const scalar = fc.oneof(anyString, anyNumber, fc.boolean(), fc.constant(null));

const anyKey = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    'id',
    'items',
    '',
    ' ',
  ),
);

const { value: anyValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.array(fc.tuple(anyKey, tie('value')), { maxLength: 4 }).map(objectOf),
  ),
}));

type Path = (string | number)[];

/** Every node of a JSON value, as paths from the root (the root itself is `[]`). */
function pathsOf(value: unknown, path: Path = []): Path[] {
  if (Array.isArray(value))
    return [path, ...value.flatMap((member, index) => pathsOf(member, [...path, index]))];
  if (typeof value === 'object' && value !== null && !isRaw(value)) {
    return [path, ...Object.entries(value).flatMap(([key, member]) => pathsOf(member, [...path, key]))];
  }
  return [path];
}

const childOf = (node: unknown, key: string | number): unknown =>
  (node as Record<string | number, unknown>)[key];

/** `root` with the node at `path` replaced by `replace(node)`, or removed when that returns REMOVE. */
const REMOVE = Symbol('remove');
function edit(root: unknown, path: Path, replace: (node: unknown) => unknown): unknown {
  if (path.length === 0) return replace(root);
  const [key, ...rest] = path as [string | number, ...Path];
  const next = edit(childOf(root, key), rest, replace);
  if (Array.isArray(root)) {
    const copy = [...root];
    if (next === REMOVE) copy.splice(key as number, 1);
    else copy[key as number] = next;
    return copy;
  }
  const entries = Object.entries(root as object).filter(([name]) => name !== key || next !== REMOVE);
  return objectOf(
    next === REMOVE ? entries : entries.map(([name, value]) => [name, name === key ? next : value]),
  );
}

type Mutation =
  | { kind: 'remove' | 'null' | 'wrap' | 'stringify' | 'flood'; at: number }
  | { kind: 'replace'; at: number; value: unknown }
  | { kind: 'extra'; at: number; key: string; value: unknown }
  | { kind: 'text'; at: number; value: string | Raw; append: boolean }
  | { kind: 'number'; at: number; value: unknown }
  | { kind: 'deep'; at: number; depth: number };

const mutation = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('remove', 'null'), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('wrap', 'stringify', 'flood'), at: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('replace'), at: fc.nat(), value: anyValue }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('extra'), at: fc.nat(), key: anyKey, value: anyValue }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('text'), at: fc.nat(), value: anyString, append: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('number'), at: fc.nat(), value: anyNumber }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('deep'),
      at: fc.nat(),
      depth: fc.constantFrom(8, 33, 5000, 200_000),
    }),
  },
) as fc.Arbitrary<Mutation>;

/** Which nodes a mutation may pick: text and number changes go to strings and numbers, when there are any. */
function candidates(body: unknown, change: Mutation): Path[] {
  const paths = pathsOf(body);
  const type = change.kind === 'text' ? 'string' : change.kind === 'number' ? 'number' : undefined;
  const typed = type ? paths.filter((path) => typeof path.reduce(childOf, body) === type) : [];
  return typed.length > 0 ? typed : paths;
}

/** Applies a mutation to the node it picks (`at` modulo the number of candidates). */
function mutate(body: unknown, change: Mutation): unknown {
  const paths = candidates(body, change);
  const path = paths[change.at % paths.length] as Path;
  return edit(body, path, (node) => {
    switch (change.kind) {
      case 'remove':
        return path.length === 0 ? undefined : REMOVE;
      case 'null':
        return null;
      case 'wrap':
        return [node];
      case 'stringify':
        return typeof node === 'string' ? node : toJsonText(node);
      case 'flood':
        // Past every list limit (items, tiers, ids): the same member a thousand and one times.
        return Array.isArray(node) && node.length > 0 ? Array(1001).fill(node[0]) : node;
      case 'replace':
      case 'number':
        return change.value;
      case 'text':
        return change.append && typeof node === 'string' && typeof change.value === 'string'
          ? node + change.value
          : change.value;
      case 'deep':
        return raw(`${'['.repeat(change.depth)}${toJsonText(node)}${']'.repeat(change.depth)}`);
      case 'extra':
        if (Array.isArray(node)) return [...node, change.value];
        if (typeof node === 'object' && node !== null) {
          return objectOf([...Object.entries(node), [change.key, change.value]]);
        }
        return change.value;
    }
  });
}

/** The example with a random selection of its nodes set to null, the root excepted. */
function nulled(example: unknown, mask: boolean[]): unknown {
  return (
    pathsOf(example)
      .slice(1)
      .filter((_, index) => mask[index % mask.length])
      // Children before their parents, so a nulled parent does not hide the path to a child.
      .reverse()
      .reduce((body, path) => edit(body, path, () => null), example)
  );
}

const NOT_JSON = [
  '',
  '{',
  '{"name":',
  '[1,2',
  'nul',
  '{"a":1}}',
  '{"name": "x",}',
  "{'name': 'x'}",
  '\u0000',
  'NaN',
];

type Body = { json: unknown } | { text: string };

function bodies(example: unknown): fc.Arbitrary<Body> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant({ json: example }) },
    {
      weight: 10,
      arbitrary: fc
        .array(mutation, { minLength: 1, maxLength: 3 })
        .map((changes) => ({ json: changes.reduce(mutate, example) })),
    },
    {
      weight: 2,
      arbitrary: fc
        .array(fc.boolean(), { minLength: 1, maxLength: 8 })
        .map((mask) => ({ json: nulled(example, mask) })),
    },
    { weight: 2, arbitrary: anyValue.map((json) => ({ json })) },
    { weight: 1, arbitrary: fc.oneof(fc.constantFrom(...NOT_JSON), fc.string()).map((text) => ({ text })) },
  );
}

const GARBAGE_SEGMENTS = [
  '%',
  '%zz',
  '%E2%82',
  '%00',
  '%2F',
  'null',
  '0',
  '-1',
  '1e400',
  "'",
  '%20',
  'x'.repeat(5000),
];

/**
 * Path ids: mostly the existing one, in either case (so that bodies reach the service), else an id of
 * another environment or of another kind, a random UUID, or garbage.
 */
function pathIds(existing: string, elsewhere: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 7, arbitrary: fc.constant(existing) },
    { weight: 1, arbitrary: fc.constant(existing.toUpperCase()) },
    { weight: 1, arbitrary: fc.constantFrom(...elsewhere) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.uuid().map((id) => id.toUpperCase()) },
    {
      weight: 1,
      arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).map(encodeURIComponent),
    },
    { weight: 1, arbitrary: fc.constantFrom(...GARBAGE_SEGMENTS) },
  );
}

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  '',
];

const contentType = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  { weight: 1, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
);

const idempotencyKey = fc.oneof(
  fc.constant(undefined),
  fc.uuid(),
  fc.constant('fuzz-reused-key'),
  fc.string({ unit: 'grapheme-ascii', maxLength: 300 }),
);

// ---- the state a refused request must not change -------------------------------------------------

let db: pg.Client;
let snapshotQuery: string;

/**
 * Row count and newest row version of every tenant table (every table with an environment_id,
 * audit_event and idempotency_key included). An insert raises the count or the newest xmin, an
 * update the newest xmin, a delete lowers the count: equal snapshots mean nothing was written.
 */
async function snapshot(): Promise<Record<string, string>> {
  const { rows } = await db.query<{ name: string; state: string }>(snapshotQuery);
  return Object.fromEntries(rows.map((row) => [row.name, row.state]));
}

// ---- the properties ------------------------------------------------------------------------------

let env: TestEnvironment;
let fixtures: Fixtures;
/** Ids of every kind, in the fuzzed environment and in another one. */
let otherIds: string[];

beforeAll(async () => {
  env = await t.createEnvironment('Fuzz');
  const other = await t.createEnvironment('Other');
  fixtures = await createFixtures(env);
  const foreign = await createFixtures(other);
  otherIds = Object.values(EXISTING_IDS).flatMap((id) => [id(foreign), id(fixtures)]);
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  const { rows } = await db.query<{ table_name: string }>(
    `select table_name from information_schema.columns
     where table_schema = current_schema() and column_name = 'environment_id' order by table_name`,
  );
  snapshotQuery = rows
    .map(
      ({ table_name: name }) =>
        `select '${name}' as name, count(*) || ':' || coalesce(max(xmin::text::bigint), 0) as state from "${name}"`,
    )
    .join(' union all ');
  // The snapshot must see the rows (a connection that row-level security hides them from would not).
  expect((await snapshot()).customer).toMatch(/^[1-9]/);
  expect(rows.map((row) => row.table_name)).toEqual(
    expect.arrayContaining([
      'audit_event',
      'customer',
      'idempotency_key',
      'invoice',
      'invoice_item',
      'price',
    ]),
  );
});

afterAll(async () => {
  await db?.end();
});

/** The checks every fuzzed response passes, given the snapshots taken before and after the request. */
function expectSafe(response: TestResponse, before: Record<string, string>, after: Record<string, string>) {
  expect(response.status, JSON.stringify(response.body)).toBeLessThan(500);
  if (response.status < 400) return;
  expect(response.headers.get('content-type')).toBe(PROBLEM_CONTENT_TYPE);
  expect(response.body).toMatchObject({
    status: response.status,
    title: expect.any(String),
    detail: expect.any(String),
  });
  expect(after, 'a refused request changed the database').toEqual(before);
}

describe('every REST operation has an example body when it takes one', () => {
  it('lists exactly the operations with a body', () => {
    const withBody = routes.filter((route) => route.body).map(operationOf);
    expect(Object.keys(EXAMPLE_BODIES).sort()).toEqual(withBody.sort());
    const params = [...new Set(routes.flatMap((route) => pathParams(route.path)))];
    expect(params.filter((param) => !EXISTING_IDS[param])).toEqual([]);
  });

  it.each(routes.filter((route) => route.body).map(operationOf))(
    '%s accepts its example',
    async (operation) => {
      const route = routes.find((candidate) => operationOf(candidate) === operation) as Route;
      const path = route.path.replace(
        /\{(\w+)\}/g,
        (_, param: string) => EXISTING_IDS[param]?.(fixtures) ?? '',
      );
      const response = await t.rest(route.method, path, { env, body: EXAMPLE_BODIES[operation]?.(fixtures) });
      expect(response.status, JSON.stringify(response.body)).toBe(route.response.status);
    },
  );
});

describe.each(routes.map((route) => ({ operation: operationOf(route), route })))(
  'fuzzing $operation',
  ({ route }) => {
    it(`answers ${RUNS_PER_OPERATION} generated requests without a 5xx, with problem details, writing nothing when refusing`, async () => {
      const example = route.body ? EXAMPLE_BODIES[operationOf(route)]?.(fixtures) : undefined;
      if (route.body && !example) throw new Error(`${operationOf(route)} needs an example in EXAMPLE_BODIES`);
      const existing = pathParams(route.path).map((param) => EXISTING_IDS[param]?.(fixtures) as string);
      const request = fc.record({
        ids: fc.tuple(...existing.map((id) => pathIds(id, otherIds))),
        body: route.body ? bodies(example) : fc.constant(undefined),
        contentType,
        idempotencyKey: route.method === 'POST' ? idempotencyKey : fc.constant(undefined),
      });
      let before = await snapshot();
      await fc.assert(
        fc.asyncProperty(request, async ({ ids, body, contentType: type, idempotencyKey: key }) => {
          let index = 0;
          const path = route.path.replace(/\{\w+\}/g, () => ids[index++] as string);
          const headers: Record<string, string> = {};
          if (body) headers['content-type'] = type;
          if (key !== undefined) headers['idempotency-key'] = key;
          const rawBody = body && ('text' in body ? body.text : toJsonText(body.json));
          const response = await t.rest(route.method, path, { env, headers, rawBody });
          const previous = before;
          before = await snapshot();
          expectSafe(response, previous, before);
          // The fuzzed operations delete nothing: an existing id, in whatever case, is always found.
          if (ids.every((id, i) => id.toLowerCase() === existing[i])) expect(response.status).not.toBe(404);
        }),
        { numRuns: RUNS_PER_OPERATION, seed: SEED },
      );
    }, 180_000);
  },
);
