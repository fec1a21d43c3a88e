import { randomBytes, randomUUID } from 'node:crypto';
import {
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLOutputType,
  getNamedType,
  isInputObjectType,
  isLeafType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';
import { routes } from '../../src/rest/routes.ts';
import { setupTestApp, type TestResponse } from '../support/harness.ts';
import {
  BILLING_AS_OF,
  INVOICE_DATE,
  type MarkedEnvironment,
  priceBody,
  type Shared,
  SUBSCRIPTION_START,
  type Target,
  tenantFixtures,
  tenantTables,
  USAGE_AT,
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

/** A request that names nothing runs once; one with a `target` runs with an own, a foreign and a random one. */
type RestCase = {
  target?: Target;
  request: (ref: string, own: Shared, env: MarkedEnvironment) => { path: string; body?: unknown };
};
type GraphqlCase = { target?: Target; args: (ref: string, own: Shared) => Record<string, unknown> };

const priceUpdate = {
  name: 'Renamed',
  description: null,
  termUnit: 'year',
  termCount: 1,
  priceModel: 'fee',
  pricing: { eur: { amount: 2999 } },
};
const item = { quantity: 1, unitAmount: 100, title: 'Matrix line' };
const subscriptionInput = (customerId: string, productId: string, priceId: string) => ({
  customerId,
  term: { start: SUBSCRIPTION_START },
  items: [{ productId, priceId }],
});

const REST_CASES: Record<string, RestCase[]> = {
  'GET /customers/{customerId}': [{ target: 'customer', request: (id) => ({ path: `/customers/${id}` }) }],
  'PATCH /customers/{customerId}': [
    { target: 'customer', request: (id) => ({ path: `/customers/${id}`, body: { name: 'Renamed' } }) },
  ],
  'PATCH /products/{productId}': [
    { target: 'product', request: (id) => ({ path: `/products/${id}`, body: { name: 'Renamed' } }) },
    {
      target: 'taxCode',
      request: (code, own) => ({ path: `/products/${own.product}`, body: { taxCode: code } }),
    },
  ],
  'POST /prices': [{ request: (_, __, env) => ({ path: '/prices', body: priceBody(env) }) }],
  'PUT /prices/{priceId}': [
    { target: 'price', request: (id) => ({ path: `/prices/${id}`, body: priceUpdate }) },
  ],
  'POST /accountsets': [
    {
      target: 'ledgerAccount',
      request: (id, own) => ({
        path: '/accountsets',
        body: {
          name: 'Matrix set',
          salesAccountId: id,
          incomeAccountId: own.ledgerAccount,
          taxAccountId: own.ledgerAccount,
          deferralAccountId: own.ledgerAccount,
        },
      }),
    },
  ],
  'POST /invoices': [
    {
      target: 'customer',
      request: (id) => ({
        path: '/invoices',
        body: { customerId: id, currency: 'EUR', date: INVOICE_DATE, items: null },
      }),
    },
    {
      target: 'taxCode',
      request: (code, own) => ({
        path: '/invoices',
        body: {
          customerId: own.customer,
          currency: 'EUR',
          date: INVOICE_DATE,
          items: [{ ...item, taxCode: code }],
        },
      }),
    },
    {
      // No title: only a product found by its handle can supply one.
      target: 'productHandle',
      request: (handle, own) => ({
        path: '/invoices',
        body: {
          customerId: own.customer,
          currency: 'EUR',
          date: INVOICE_DATE,
          items: [{ quantity: 1, unitAmount: 100, sku: handle }],
        },
      }),
    },
  ],
  'GET /invoices/{invoiceId}': [
    { target: 'draftInvoice', request: (id) => ({ path: `/invoices/${id}` }) },
    { target: 'bookedInvoice', request: (id) => ({ path: `/invoices/${id}` }) },
  ],
  'GET /subscriptions/{subscriptionId}': [
    { target: 'subscription', request: (id) => ({ path: `/subscriptions/${id}` }) },
  ],
};

const page = () => ({ first: 100 });
const byId = (target: Target): GraphqlCase => ({ target, args: (id) => ({ id }) });

const GRAPHQL_CASES: Record<string, GraphqlCase[]> = {
  'Query.accountSet': [byId('accountSet')],
  'Query.accountSets': [{ args: page }],
  'Query.auditEvents': [{ args: page }, { target: 'customer', args: (id) => ({ objectId: id, first: 100 }) }],
  'Query.billingRun': [byId('billingRun')],
  'Query.billingRuns': [{ args: page }],
  'Query.environment': [{ args: () => ({}) }],
  'Query.customer': [byId('customer')],
  'Query.customers': [{ args: page }],
  'Query.invoice': [byId('draftInvoice'), byId('bookedInvoice')],
  'Query.invoiceNumbering': [{ args: () => ({}) }],
  'Query.invoices': [
    { args: page },
    { target: 'customer', args: (id) => ({ filter: { customerId: id }, first: 100 }) },
  ],
  'Query.ledgerAccount': [byId('ledgerAccount')],
  'Query.ledgerAccounts': [{ args: page }],
  'Query.price': [byId('price')],
  'Query.prices': [{ args: page }],
  'Query.product': [byId('product')],
  'Query.products': [{ args: page }],
  'Query.subscription': [byId('subscription')],
  'Query.subscriptions': [
    { args: page },
    { target: 'customer', args: (id) => ({ filter: { customerId: id }, first: 100 }) },
  ],
  'Query.taxCode': [{ target: 'taxCode', args: (code) => ({ code }) }],
  'Query.taxCodes': [{ args: page }],

  'Mutation.accountSetCreate': [
    {
      target: 'ledgerAccount',
      args: (id, own) => ({
        input: {
          salesAccountId: id,
          incomeAccountId: own.ledgerAccount,
          taxAccountId: own.ledgerAccount,
          deferralAccountId: own.ledgerAccount,
        },
      }),
    },
  ],
  'Mutation.billingRunCreate': [{ args: () => ({ asOf: BILLING_AS_OF }) }],
  'Mutation.creditNoteCreate': [{ target: 'bookedInvoice', args: (id) => ({ invoiceId: id }) }],
  'Mutation.customerUpdate': [{ target: 'customer', args: (id) => ({ id, input: { name: 'Renamed' } }) }],
  'Mutation.invoiceBook': [byId('draftInvoice')],
  'Mutation.invoiceCreate': [
    { target: 'customer', args: (id) => ({ input: { customerId: id, date: INVOICE_DATE } }) },
    {
      target: 'taxCode',
      args: (code, own) => ({
        input: { customerId: own.customer, date: INVOICE_DATE, items: [{ ...item, taxCode: code }] },
      }),
    },
    {
      target: 'productHandle',
      args: (handle, own) => ({
        input: {
          customerId: own.customer,
          date: INVOICE_DATE,
          items: [{ quantity: 1, unitAmount: 100, sku: handle }],
        },
      }),
    },
  ],
  'Mutation.invoiceDelete': [byId('draftInvoice')],
  'Mutation.invoiceItemAdd': [
    { target: 'draftInvoice', args: (id) => ({ invoiceId: id, input: item }) },
    {
      target: 'taxCode',
      args: (code, own) => ({ invoiceId: own.draftInvoice, input: { ...item, taxCode: code } }),
    },
  ],
  'Mutation.invoiceItemRemove': [byId('invoiceItem')],
  'Mutation.invoiceItemUpdate': [
    { target: 'invoiceItem', args: (id) => ({ id, input: { title: 'Changed' } }) },
    { target: 'taxCode', args: (code, own) => ({ id: own.invoiceItem, input: { taxCode: code } }) },
  ],
  'Mutation.invoiceSettle': [
    { target: 'bookedInvoice', args: (id) => ({ id, input: { amount: 100, date: INVOICE_DATE } }) },
  ],
  'Mutation.invoiceUpdate': [{ target: 'draftInvoice', args: (id) => ({ id, input: { memo: 'Changed' } }) }],
  'Mutation.ledgerAccountUpdate': [
    { target: 'ledgerAccount', args: (id) => ({ id, input: { name: 'Renamed' } }) },
  ],
  'Mutation.priceUpdate': [{ target: 'price', args: (id) => ({ id, input: priceUpdate }) }],
  'Mutation.productCreate': [
    { target: 'taxCode', args: (code) => ({ input: { name: 'Matrix', taxCode: code } }) },
  ],
  'Mutation.productUpdate': [
    { target: 'product', args: (id) => ({ id, input: { name: 'Renamed' } }) },
    { target: 'taxCode', args: (code, own) => ({ id: own.product, input: { taxCode: code } }) },
  ],
  'Mutation.subscriptionCancel': [byId('subscription')],
  'Mutation.subscriptionCreate': [
    { target: 'customer', args: (id, own) => ({ input: subscriptionInput(id, own.product, own.price) }) },
    { target: 'product', args: (id, own) => ({ input: subscriptionInput(own.customer, id, own.price) }) },
    { target: 'price', args: (id, own) => ({ input: subscriptionInput(own.customer, own.product, id) }) },
  ],
  'Mutation.subscriptionUpdate': [
    { target: 'subscription', args: (id) => ({ id, input: { autoRenewal: false } }) },
    {
      target: 'subscriptionItem',
      args: (id, own) => ({ id: own.subscription, input: { items: [{ id, quantity: 2 }] } }),
    },
    {
      target: 'subscriptionItem',
      args: (id, own) => ({ id: own.subscription, input: { removeItemIds: [id] } }),
    },
    {
      target: 'product',
      args: (id, own) => ({
        id: own.subscription,
        input: { addItems: [{ productId: id, priceId: own.price }] },
      }),
    },
    {
      target: 'price',
      args: (id, own) => ({
        id: own.subscription,
        input: { addItems: [{ productId: own.product, priceId: id }] },
      }),
    },
  ],
  'Mutation.taxCodeUpdate': [{ target: 'taxCodeId', args: (id) => ({ id, input: { rate: 10 } }) }],
  'Mutation.usageRecord': [
    {
      target: 'usageItem',
      args: (id) => ({
        subscriptionItemId: id,
        quantity: 1,
        timestamp: USAGE_AT,
        idempotencyKey: 'matrix-usage',
      }),
    },
  ],
};

/** Whether an argument of this type can carry an id, directly or inside an input object. */
function carriesId(type: GraphQLInputType, seen = new Set<string>()): boolean {
  const named = getNamedType(type);
  if (named.name === 'UUID' || named.name === 'ID') return true;
  if (!isInputObjectType(named) || seen.has(named.name)) return false;
  seen.add(named.name);
  return Object.values(named.getFields()).some((field) => carriesId(field.type, seen));
}

/** Every field of the result, nested objects and connections included, down to `depth` levels. */
function selectionOf(type: GraphQLOutputType, depth: number): string {
  const named = getNamedType(type);
  if (isLeafType(named)) return '';
  if (!isObjectType(named) || depth === 0) return ' { __typename }';
  const fields = Object.values(named.getFields()).filter((field) =>
    field.args.every((arg) => !isNonNullType(arg.type)),
  );
  return ` { ${fields.map((field) => field.name + selectionOf(field.type, depth - 1)).join(' ')} }`;
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
    : target === 'productHandle'
      ? `sku-random-${randomBytes(4).toString('hex')}`
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
            expect(value === null || value.edges?.length === 0).toBe(true);
          }
        },
      );
    });
  });
});
