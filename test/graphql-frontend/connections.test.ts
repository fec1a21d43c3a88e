import { getNamedType, isObjectType } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';
import { type MarkedEnvironment, type Shared, tenantFixtures } from '../security/fixtures.ts';
import { gql } from '../support/catalog.ts';
import { setupTestApp } from '../support/harness.ts';

const t = setupTestApp();
const f = tenantFixtures(t);

/** A connection reached from the root: `Query.<field>`, or through an object the fixtures made. */
type Reach = { field: string; args?: string; parent?: { field: string; target: keyof Shared } };

/** Every connection of the schema and how to reach it in an environment the fixtures populated. */
const REACH: Record<string, Reach> = {
  'Query.accountSets': { field: 'accountSets' },
  'Query.auditEvents': { field: 'auditEvents' },
  'Query.billableMetrics': { field: 'billableMetrics' },
  'Query.billingRuns': { field: 'billingRuns' },
  'Query.customers': { field: 'customers' },
  'Query.events': { field: 'events' },
  'Query.invoices': { field: 'invoices' },
  'Query.journalEntries': { field: 'journalEntries' },
  'Query.ledgerAccounts': { field: 'ledgerAccounts' },
  'Query.prices': { field: 'prices' },
  'Query.products': { field: 'products' },
  'Query.subscriptions': { field: 'subscriptions' },
  'Query.taxCodes': { field: 'taxCodes' },
  'Query.testClocks': { field: 'testClocks' },
  'Query.webhookEndpoints': { field: 'webhookEndpoints' },
  'Customer.balanceTransactions': {
    field: 'balanceTransactions',
    parent: { field: 'customer', target: 'creditedCustomer' },
  },
  'Customer.invoices': { field: 'invoices', parent: { field: 'customer', target: 'customer' } },
  'Customer.refunds': { field: 'refunds', parent: { field: 'customer', target: 'creditedCustomer' } },
  'WebhookEndpoint.deliveries': {
    field: 'deliveries',
    parent: { field: 'webhookEndpoint', target: 'webhookEndpoint' },
  },
};

/** Every `<Type>.<field>` of the schema that answers a connection (edges and pageInfo). */
function connectionFields(): string[] {
  return Object.values(schema.getTypeMap())
    .filter(isObjectType)
    .filter((type) => !type.name.startsWith('__'))
    .flatMap((type) =>
      Object.values(type.getFields())
        .filter((field) => {
          const named = getNamedType(field.type);
          return isObjectType(named) && 'edges' in named.getFields() && 'pageInfo' in named.getFields();
        })
        .map((field) => `${type.name}.${field.name}`),
    )
    .sort();
}

type Page = {
  totalCount: number;
  edges: { cursor: string; node: { id: string } }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
};

let env: MarkedEnvironment;
let shared: Shared;

async function pageOf(reach: Reach, variables: Record<string, unknown>, extraArgs = ''): Promise<Page> {
  const args = `first: $first, after: $after, last: $last, before: $before${extraArgs}`;
  const selection = `${reach.field}(${args}) {
    totalCount edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }`;
  const query = reach.parent
    ? `query ($id: UUID!, $first: Int, $after: String, $last: Int, $before: String) {
        parent: ${reach.parent.field}(id: $id) { ${selection} } }`
    : `query ($first: Int, $after: String, $last: Int, $before: String) { parent: __typename ${selection} }`;
  const data = await gql(t, env, query, {
    ...variables,
    ...(reach.parent ? { id: shared[reach.parent.target] } : {}),
  });
  return reach.parent ? data.parent[reach.field] : data[reach.field];
}

/** The ids of the whole list paged forwards (`first`) and backwards (`last`), `size` at a time. */
async function pageBothWays(reach: Reach, size: number, extraArgs = '') {
  const forwards: string[] = [];
  let after: string | null = null;
  let total = -1;
  for (let guard = 0; guard < 100; guard++) {
    const page: Page = await pageOf(reach, { first: size, after }, extraArgs);
    total = page.totalCount;
    forwards.push(...page.edges.map((edge) => edge.node.id));
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  const backwards: string[] = [];
  let before: string | null = null;
  for (let guard = 0; guard < 100; guard++) {
    const page: Page = await pageOf(reach, { last: size, before }, extraArgs);
    backwards.unshift(...page.edges.map((edge) => edge.node.id));
    if (!page.pageInfo.hasPreviousPage) break;
    before = page.pageInfo.startCursor;
  }
  return { forwards, backwards, total };
}

beforeAll(async () => {
  env = await f.createEnvironment('Connections');
  shared = await f.populate(env);
  // A few more of the lists that sort and filter, named so that creation and name order differ.
  for (const name of ['delta', 'Alpha', 'charlie', 'Bravo']) {
    await gql(
      t,
      env,
      'mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } } }',
      {
        input: {
          name: `${name} GmbH`,
          handle: `h-${name.toLowerCase()}`,
          currency: name === 'Bravo' ? 'USD' : 'EUR',
        },
      },
    );
    await gql(
      t,
      env,
      'mutation ($input: ProductCreateInput!) { productCreate(input: $input) { product { id } } }',
      {
        input: { name: `${name} product`, handle: `sku-${name.toLowerCase()}` },
      },
    );
    await gql(
      t,
      env,
      'mutation ($input: TaxCodeCreateInput!) { taxCodeCreate(input: $input) { taxCode { id } } }',
      {
        input: { code: `${name.toUpperCase()}-VAT`, rate: 7 },
      },
    );
  }
}, 120_000);

describe('connections', () => {
  it('every connection of the schema is reached here', () => {
    expect(connectionFields()).toEqual(Object.keys(REACH).sort());
  });

  it.each(Object.entries(REACH))(
    '%s pages backwards to the set it pages forwards, and counts it',
    async (_name, reach) => {
      // Small pages, so that short lists take several; the long event lists in larger ones.
      const { forwards, backwards, total } = await pageBothWays(
        reach,
        /[eE]vents$/.test(reach.field) ? 10 : 2,
      );
      expect(forwards.length).toBeGreaterThan(0);
      expect(new Set(forwards).size).toBe(forwards.length);
      expect(backwards).toEqual(forwards);
      expect(total).toBe(forwards.length);
    },
  );

  it.each([
    ['customers', 'name', 'orderBy: { field: name, direction: desc }'],
    ['products', 'name', 'orderBy: { field: name }'],
    ['prices', 'name', 'orderBy: { field: name, direction: desc }'],
    ['taxCodes', 'code', 'orderBy: { field: code }'],
    ['invoices', 'totalInclVat', 'orderBy: { field: total, direction: desc }'],
  ])('%s sorted by %s page both ways in that order', async (field, key, orderBy) => {
    const { forwards, backwards, total } = await pageBothWays({ field }, 2, `, ${orderBy}`);
    expect(backwards).toEqual(forwards);
    expect(total).toBe(forwards.length);
    const data = await gql(t, env, `{ ${field}(first: 100, ${orderBy}) { edges { node { id ${key} } } } }`);
    const rows = data[field].edges.map((edge: any) => edge.node);
    expect(rows.map((row: any) => row.id)).toEqual(forwards);
    const descending = orderBy.includes('desc');
    const values = rows.map((row: any) => row[key]);
    const collator = new Intl.Collator('en');
    for (let i = 1; i < values.length; i++) {
      const order = typeof values[i] === 'number' ? values[i] - values[i - 1] : 0;
      // Strings follow the database's collation; check only the numeric order strictly.
      if (typeof values[i] === 'number') expect(descending ? order <= 0 : order >= 0).toBe(true);
      else expect(typeof collator.compare(values[i], values[i - 1])).toBe('number');
    }
    if (field === 'customers') {
      // The four named ones appear in name order among the others (case-insensitively, as the collation sorts).
      const names = values.filter((name: string) => name.endsWith('GmbH'));
      expect(names).toEqual(['delta GmbH', 'charlie GmbH', 'Bravo GmbH', 'Alpha GmbH']);
    }
  });

  it('filters customers, products, prices and tax codes', async () => {
    const data = await gql(
      t,
      env,
      `{
        byName: customers(filter: { search: "ALPHA" }) { totalCount edges { node { name } } }
        byHandle: customers(filter: { search: "h-br" }) { edges { node { name } } }
        usd: customers(filter: { currency: "usd" }) { edges { node { name } } }
        products(filter: { search: "sku-ch" }) { totalCount edges { node { name } } }
        eurPrices: prices(filter: { currency: "EUR", purchase: recurring }) { totalCount }
        allPrices: prices { totalCount }
        noPrices: prices(filter: { currency: "JPY" }) { totalCount edges { node { id } } }
        taxCodes(filter: { search: "delta" }) { edges { node { code } } }
        wildcard: customers(filter: { search: "%" }) { totalCount }
      }`,
    );
    expect(data.byName).toEqual({ totalCount: 1, edges: [{ node: { name: 'Alpha GmbH' } }] });
    expect(data.byHandle.edges).toEqual([{ node: { name: 'Bravo GmbH' } }]);
    expect(data.usd.edges).toEqual([{ node: { name: 'Bravo GmbH' } }]);
    expect(data.products).toEqual({ totalCount: 1, edges: [{ node: { name: 'charlie product' } }] });
    expect(data.eurPrices.totalCount).toBeGreaterThan(0);
    expect(data.eurPrices.totalCount).toBeLessThanOrEqual(data.allPrices.totalCount);
    expect(data.noPrices).toEqual({ totalCount: 0, edges: [] });
    expect(data.taxCodes.edges).toEqual([{ node: { code: 'DELTA-VAT' } }]);
    expect(data.wildcard.totalCount).toBe(0);
  });

  it('looks customers and products up by handle and invoices by number, within the environment', async () => {
    const other = await f.createEnvironment('Elsewhere');
    const booked = await gql(t, env, 'query ($id: UUID!) { invoice(id: $id) { id handle } }', {
      id: shared.bookedInvoice,
    });
    const query = `query ($handle: String!, $number: String!) {
      customerByHandle(handle: $handle) { name }
      productByHandle(handle: "sku-alpha") { name }
      invoiceByNumber(number: $number) { id }
    }`;
    const variables = { handle: 'h-alpha', number: booked.invoice.handle };
    expect(await gql(t, env, query, variables)).toEqual({
      customerByHandle: { name: 'Alpha GmbH' },
      productByHandle: { name: 'Alpha product' },
      invoiceByNumber: { id: shared.bookedInvoice },
    });
    expect(await gql(t, other, query, variables)).toEqual({
      customerByHandle: null,
      productByHandle: null,
      invoiceByNumber: null,
    });
  });

  it('refuses first with last, and a cursor of another order', async () => {
    const both = await t.graphql('{ customers(first: 1, last: 1) { totalCount } }', {}, { env });
    expect(both.body.errors?.[0]?.extensions?.code).toBe('INVALID_INPUT');
    const byName = await gql(
      t,
      env,
      '{ customers(first: 1, orderBy: { field: name }) { pageInfo { endCursor } } }',
    );
    const mixed = await t.graphql(
      'query ($after: String) { customers(first: 1, after: $after) { totalCount } }',
      { after: byName.customers.pageInfo.endCursor },
      { env },
    );
    expect(mixed.body.errors?.[0]?.extensions?.code).toBe('INVALID_INPUT');
  });
});
