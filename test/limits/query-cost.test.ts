import type { MikroORM } from '@mikro-orm/postgresql';
import { parse } from 'graphql';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/app.ts';
import { MAX_PAGE_SIZE } from '../../src/db/pagination.ts';
import { schema } from '../../src/graphql/schema.ts';
import { GRAPHQL_LIMITS } from '../../src/limits/graphql-limits.ts';
import { priceQuery } from '../../src/limits/query-cost.ts';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { openLoggedOrm, type StatementLog } from '../support/statements.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

/** Every field of an invoice, its customer, its lines and its settlements. */
const FULL_INVOICE = `
  id type status handle date dueDate currency memo createdAt updatedAt bookedAt
  totalExclVat totalVat totalInclVat totalDue settlementStatus
  customerId customer { handle name billingAddress { street1 street2 city postalCode state county country } }
  creditedInvoice { id handle }
  items {
    id title description sku quantity unitAmount amount taxAmount periodStart periodEnd creditedItemId
    discount { amount percentage } tax { taxable taxCode taxRate }
  }
  settlements { id date amount reference note createdAt }`;

const page = (alias: string, first: string) =>
  `${alias}: invoices(first: ${first}) { edges { cursor node { ${FULL_INVOICE} } } pageInfo { hasNextPage endCursor } }`;

describe('query cost', () => {
  let env: TestEnvironment;
  let orm: MikroORM;
  let log: StatementLog;
  let app: App;

  beforeAll(async () => {
    env = await t.createEnvironment('Cost');
    const customerId = await f.createCustomer(env, { name: 'Ada' });
    for (let i = 0; i < 3; i++) {
      await f.createInvoice(env, {
        customerId,
        items: [{ quantity: 1, unitAmount: 100, title: `Line ${i}` }],
      });
    }
    ({ orm, log } = await openLoggedOrm(t.databaseUrl));
    app = createApp({ orm, logger: pino({ level: 'silent' }) });
  });

  afterAll(async () => {
    await orm?.close();
  });

  const post = async (query: string, variables: Record<string, unknown> = {}) => {
    log.statements = [];
    const response = await app.fetch('http://test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...env.headers },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, body: await response.json(), statements: log.statements };
  };

  it(`serves a page of ${MAX_PAGE_SIZE} invoices with every field of their lines and settlements`, async () => {
    const response = await post(`{ ${page('invoices', String(MAX_PAGE_SIZE))} }`);

    expect(response.body.errors).toBeUndefined();
    expect(response.body.data.invoices.edges).toHaveLength(3);
  });

  it(`refuses ${GRAPHQL_LIMITS.maxAliases} aliased pages before anything executes`, async () => {
    const aliases = Array.from({ length: GRAPHQL_LIMITS.maxAliases }, (_, i) => page(`p${i}`, '100'));

    const response = await post(`{ ${aliases.join(' ')} }`);

    expect(response.status).toBe(400);
    expect(response.body.data).toBeUndefined();
    const [error] = response.body.errors;
    expect(error.extensions).toMatchObject({ code: 'QUERY_TOO_COMPLEX', maxCost: GRAPHQL_LIMITS.maxCost });
    expect(error.extensions.cost).toBeGreaterThan(GRAPHQL_LIMITS.maxCost);
    expect(error.message).toContain(`costs ${error.extensions.cost}; the limit is ${GRAPHQL_LIMITS.maxCost}`);
    // no transaction was opened, so no resolver ran
    expect(response.statements).toEqual([]);
  });

  it('prices a page size given as a variable by its value, however often the document was seen', async () => {
    const query = `query ($n: Int) { ${page('a', '$n')} ${page('b', '$n')} ${page('c', '$n')} }`;

    const small = await post(query, { n: 2 });
    const large = await post(query, { n: MAX_PAGE_SIZE });

    expect(small.body.errors).toBeUndefined();
    expect(small.body.data.a.edges).toHaveLength(2);
    expect(large.status).toBe(400);
    expect(large.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(large.statements).toEqual([]);
  });

  it('prices a connection without `first` at the default page size', async () => {
    const query = `{ ${Array.from({ length: 3 }, (_, i) => `a${i}: invoices { edges { node { ${FULL_INVOICE} } } }`).join(' ')} }`;

    const response = await post(query);

    expect(response.body.errors).toBeUndefined();
  });

  it('weighs unpaged lists by their bound: a billing run’s invoices with their lines', async () => {
    const response = await post(
      '{ billingRuns(first: 10) { edges { node { invoices { items { id title amount } } } } } }',
    );

    expect(response.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(response.statements).toEqual([]);
  });

  it('remembers a price per document and page size, whatever the other variables are', async () => {
    const document = parse(`query ($n: Int, $id: UUID!, $customer: UUID) {
      customer(id: $id) { name invoices(first: $n, filter: { status: booked }) { edges { node { id } } } }
      invoices(first: 5, filter: { customerId: $customer }) { edges { node { id items { id } } } }
    }`);
    const price = (variables: Record<string, unknown>) =>
      priceQuery({ schema, document, variableValues: variables, context: {} }, GRAPHQL_LIMITS.maxCost);

    const first = price({ n: 2, id: '01a1fcaa-0000-7000-8000-000000000001' });
    const otherId = price({ n: 2, id: '01a1fcaa-0000-7000-8000-000000000002' });
    const larger = price({ n: 40, id: '01a1fcaa-0000-7000-8000-000000000001' });
    const withCustomer = price({
      n: 2,
      id: '01a1fcaa-0000-7000-8000-000000000001',
      customer: '01a1fcaa-0000-7000-8000-000000000009',
    });

    // the same page size prices the same (remembered: the same answer), another page size anew
    expect(otherId).toBe(first);
    expect(larger.cost).toBeGreaterThan(first.cost);
    // a variable an argument mapper reads (the filter's validation) is part of what is remembered
    expect(withCustomer).not.toBe(first);
    expect(withCustomer.cost).toBe(first.cost);
    // variables that do not fit their types are refused as before, not answered from what was remembered
    expect(price({ n: 2, id: 'not a uuid' }).errors[0]?.message).toContain(
      'Variable "$id" got invalid value',
    );
    // and a fresh document prices as the remembered one did
    const fresh = priceQuery(
      {
        schema,
        document: parse(document.loc?.source.body ?? ''),
        variableValues: { n: 40, id: '01a1fcaa-0000-7000-8000-000000000003' },
        context: {},
      },
      GRAPHQL_LIMITS.maxCost,
    );
    expect(fresh.errors).toEqual([]);
    expect(fresh.cost).toBe(larger.cost);
  });
});
