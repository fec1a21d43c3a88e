import type { MikroORM } from '@mikro-orm/postgresql';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { openLoggedOrm, type StatementLog } from '../support/statements.ts';
import { invoiceFixtures } from './fixtures.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

const BOOK = 'mutation ($id: UUID!) { invoiceBook(id: $id) { userErrors { message } } }';
const SETTLE = `mutation ($id: UUID!, $amount: SafeInt!) {
  invoiceSettle(id: $id, input: { date: "2026-02-01", amount: $amount }) { userErrors { message } } }`;
const LIST = `query ($first: Int, $after: String, $filter: InvoiceFilter) {
  invoices(first: $first, after: $after, filter: $filter) {
    edges { cursor node { memo } }
    pageInfo { hasNextPage hasPreviousPage endCursor }
  }
}`;

describe('listing invoices', () => {
  let env: TestEnvironment;
  let alice: string;
  let bob: string;

  const memos = async (filter: Record<string, unknown>, first = 50) => {
    const data = await f.gql(env, LIST, { first, filter });
    return data.invoices.edges.map((edge: any) => edge.node.memo);
  };

  beforeAll(async () => {
    // given, in creation order: a draft, booked invoices in each settlement state, and a credit note
    env = await t.createEnvironment();
    alice = await f.createCustomer(env, { name: 'Alice' });
    bob = await f.createCustomer(env, { name: 'Bob' });
    const item = { quantity: 1, unitAmount: 1000, title: 'Plan' };
    const create = async (memo: string, customerId: string, date: string) =>
      (await f.createInvoice(env, { customerId, memo, date, items: [item] })).id as string;
    await create('draft', alice, '2026-01-05');
    const unpaid = await create('unpaid', alice, '2026-01-10');
    const partly = await create('partly', bob, '2026-01-20');
    const paid = await create('paid', bob, '2026-02-01');
    const overpaid = await create('overpaid', alice, '2026-02-15');
    for (const id of [unpaid, partly, paid, overpaid]) await f.gql(env, BOOK, { id });
    await f.gql(env, SETTLE, { id: partly, amount: 1 });
    await f.gql(env, SETTLE, { id: paid, amount: 1000 });
    await f.gql(env, SETTLE, { id: overpaid, amount: 1001 });
    const note = await f.gql(
      env,
      'mutation ($id: UUID!) { creditNoteCreate(invoiceId: $id, input: { date: "2026-03-01", memo: "credit" }) { creditNote { id } } }',
      { id: unpaid },
    );
    await f.gql(env, BOOK, { id: note.creditNoteCreate.creditNote.id });
  });

  it('lists the invoices of the environment in creation order', async () => {
    expect(await memos({})).toEqual(['draft', 'unpaid', 'partly', 'paid', 'overpaid', 'credit']);
    const other = await t.createEnvironment('Other');
    const data = await f.gql(other, LIST, {});
    expect(data.invoices.edges).toEqual([]);
  });

  it.each([
    [{ customerId: 'alice' }, ['draft', 'unpaid', 'overpaid', 'credit']],
    [{ type: 'credit_note' }, ['credit']],
    [{ status: 'draft' }, ['draft']],
    [{ settlementStatus: 'not_settled' }, ['draft']],
    [{ settlementStatus: 'under_settled' }, ['partly']],
    [{ settlementStatus: 'settled' }, ['unpaid', 'paid', 'credit']],
    [{ settlementStatus: 'over_settled' }, ['overpaid']],
    [{ dateFrom: '2026-01-10', dateTo: '2026-02-01' }, ['unpaid', 'partly', 'paid']],
    [{ dateFrom: '2026-02-02' }, ['overpaid', 'credit']],
    [{ customerId: 'bob', status: 'booked', settlementStatus: 'settled' }, ['paid']],
  ])('filters by %j', async (filter, expected) => {
    const customers: Record<string, string> = { alice, bob };
    const resolved =
      'customerId' in filter ? { ...filter, customerId: customers[filter.customerId] } : filter;
    expect(await memos(resolved)).toEqual(expected);
  });

  it('pages with cursors', async () => {
    const first = (await f.gql(env, LIST, { first: 4 })).invoices;
    const second = (await f.gql(env, LIST, { first: 4, after: first.pageInfo.endCursor })).invoices;

    expect(first.edges.map((edge: any) => edge.node.memo)).toEqual(['draft', 'unpaid', 'partly', 'paid']);
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false });
    expect(second.edges.map((edge: any) => edge.node.memo)).toEqual(['overpaid', 'credit']);
    expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
  });

  it('refuses a page over 100 and a filter whose dates are reversed', async () => {
    const big = await t.graphql(LIST, { first: 101 }, { env });
    const reversed = await t.graphql(
      LIST,
      { filter: { dateFrom: '2026-02-01', dateTo: '2026-01-01' } },
      { env },
    );

    expect(big.body.errors[0].extensions).toMatchObject({ code: 'INVALID_INPUT' });
    expect(reversed.body.errors[0].extensions).toMatchObject({
      code: 'INVALID_INPUT',
      errors: [{ pointer: '/filter/dateTo', detail: expect.any(String) }],
    });
  });

  it("lists a customer's invoices on the customer", async () => {
    const data = await f.gql(
      env,
      `query ($id: UUID!) { customer(id: $id) {
        all: invoices { edges { node { memo } } }
        settled: invoices(filter: { settlementStatus: settled }) { edges { node { memo customer { name } } } }
      } }`,
      { id: bob },
    );

    expect(data.customer.all.edges.map((edge: any) => edge.node.memo)).toEqual(['partly', 'paid']);
    expect(data.customer.settled.edges).toEqual([{ node: { memo: 'paid', customer: { name: 'Bob' } } }]);
  });

  it('answers a page read in one statement as it answers each invoice read alone', async () => {
    // given every field of an invoice and of its parts that reads a column
    const fields = `id handle type status settlementStatus currency createdAt updatedAt bookedAt memo date
      dueDate totalExclVat totalVat totalInclVat totalDue customerId
      customer { handle name billingAddress { street1 city country } }
      liveCustomer { id name email collectionMode taxExempt timezone createdAt updatedAt }
      items { id quantity unitAmount sku title description periodStart periodEnd amount taxAmount creditedItemId
        tax { taxable taxCode taxRate } discount { percentage amount } }
      settlements { id date amount reference note createdAt }
      creditedInvoice { id handle items { id amount } }`;

    // when the page is read (its parts come with it) and each invoice is read by id (through the loaders)
    const page = await f.gql(
      env,
      `{ invoices(first: 50) { edges { node { ...F } } } } fragment F on Invoice { ${fields} }`,
    );
    const nodes = page.invoices.edges.map((edge: any) => edge.node);
    const alone = await Promise.all(
      nodes.map(
        async (node: any) =>
          (await f.gql(env, `query ($id: UUID!) { invoice(id: $id) { ${fields} } }`, { id: node.id }))
            .invoice,
      ),
    );

    // then both answer the same, for drafts, booked and settled invoices and the credit note alike
    expect(nodes).toHaveLength(6);
    expect(nodes.some((node: any) => node.settlements.length > 0 && node.creditedInvoice === null)).toBe(
      true,
    );
    expect(nodes.some((node: any) => node.creditedInvoice !== null)).toBe(true);
    expect(nodes).toEqual(alone);
  });

  it('pages backwards with items, settlements and customers as it pages forwards', async () => {
    // given a page whose parts are read once for the page (grouped by invoice, then joined to it)
    const page = `query ($first: Int, $last: Int, $before: String, $filter: InvoiceFilter) {
      invoices(first: $first, last: $last, before: $before, filter: $filter) {
        edges { cursor node { memo items { title amount } settlements { amount } customer { name } } }
      }
    }`;
    const nodes = async (variables: Record<string, unknown>) =>
      (await f.gql(env, page, variables)).invoices.edges;

    // when the invoices are read forwards, and then backwards: the last four, and two before the fifth
    const forwards = await nodes({ first: 50 });
    const lastFour = await nodes({ last: 4 });
    const twoBefore = await nodes({ last: 2, before: forwards[4].cursor });
    const bobs = await nodes({ last: 50, filter: { customerId: bob } });

    // then each backward page holds the same invoices with the same parts, in creation order
    expect(forwards.map((edge: any) => edge.node.memo)).toEqual([
      'draft',
      'unpaid',
      'partly',
      'paid',
      'overpaid',
      'credit',
    ]);
    expect(forwards[2].node).toEqual({
      memo: 'partly',
      items: [{ title: 'Plan', amount: 1000 }],
      settlements: [{ amount: 1 }],
      customer: { name: 'Bob' },
    });
    expect(lastFour).toEqual(forwards.slice(2));
    expect(twoBefore).toEqual(forwards.slice(2, 4));
    expect(bobs.map((edge: any) => edge.node)).toEqual(forwards.slice(2, 4).map((edge: any) => edge.node));
  });

  it('reads one invoice by id, and null for an unknown one', async () => {
    const [row] = await t.sql<{ id: string }>("select id from invoice where memo = 'partly'");
    const data = await f.gql(
      env,
      `query ($id: UUID!, $missing: UUID!) {
        invoice(id: $id) { memo handle totalDue settlementStatus customer { name } }
        missing: invoice(id: $missing) { id }
      }`,
      { id: row?.id, missing: '01a1fcaa-0000-7000-8000-000000000000' },
    );

    expect(data).toEqual({
      invoice: {
        memo: 'partly',
        handle: 'INV-000002',
        totalDue: 999,
        settlementStatus: 'under_settled',
        customer: { name: 'Bob' },
      },
      missing: null,
    });
  });
});

describe('loading a page of invoices', () => {
  let orm: MikroORM;
  let counter: StatementLog;
  let env: TestEnvironment;

  beforeAll(async () => {
    // given 100 invoices with items and settlements, the first a draft and the rest booked, two customers
    env = await t.createEnvironment('Page');
    const customers = [
      await f.createCustomer(env, { name: 'One' }),
      await f.createCustomer(env, { name: 'Two' }),
    ];
    const create = (index: number) =>
      f.createInvoice(env, {
        customerId: customers[index % 2],
        items: [
          { quantity: 1, unitAmount: 100 + index, title: 'A' },
          { quantity: 2, unitAmount: 50, title: 'B' },
        ],
      });
    await create(0);
    await Promise.all(
      Array.from({ length: 99 }, async (_, index) => {
        const invoice = await create(index + 1);
        await f.gql(env, BOOK, { id: invoice.id });
        if (index % 3 === 0) await f.gql(env, SETTLE, { id: invoice.id, amount: 10 });
      }),
    );
    ({ orm, log: counter } = await openLoggedOrm(t.databaseUrl));
  });

  afterAll(async () => {
    await orm?.close();
  });

  async function statementsFor(first: number) {
    const app = createApp({ orm, logger: pino({ level: 'silent' }) });
    counter.statements = [];
    const response = await app.fetch('http://test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...env.headers },
      body: JSON.stringify({
        query: `query ($first: Int) { invoices(first: $first) { edges { node {
          handle customer { name billingAddress { city } } items { amount tax { taxable } } settlements { amount }
        } } } }`,
        variables: { first },
      }),
    });
    const body = await response.json();
    expect(body.errors).toBeUndefined();
    expect(body.data.invoices.edges).toHaveLength(first);
    return counter.work();
  }

  it('takes the same number of SQL statements for 1 invoice as for 100', async () => {
    await statementsFor(1); // the first request also sees the ORM's connection check
    const one = await statementsFor(1);
    const hundred = await statementsFor(100);

    expect(hundred.length).toBe(one.length);
    // the page, its items, settlements and customers: one statement (JSON built in SQL)
    expect(hundred).toHaveLength(1);
  });
});
