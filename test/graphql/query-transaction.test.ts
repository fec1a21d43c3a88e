import { EntityManager } from '@mikro-orm/core';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();

const CREATE = `mutation($name: String!) { customerCreate(input: { name: $name }) { customer { id } } }`;
const READ = `query($id: UUID!) {
  customer(id: $id) { id name }
  customers(first: 10) { edges { node { name } } }
}`;

/**
 * A query is the request's one transaction: it runs on the EntityManager the request authenticated
 * with instead of on a fork of it (a fork builds an EntityManager and writes MikroORM's configuration
 * twice). Mutations keep a transaction, and a fork, per root field.
 */
describe("a GraphQL query's transaction", () => {
  let env: TestEnvironment;
  let forks: ReturnType<typeof vi.spyOn>;

  beforeAll(async () => {
    env = await t.createEnvironment();
  });

  afterEach(() => forks?.mockRestore());

  it('runs on the request’s own EntityManager: one fork for the whole request, the same answers', async () => {
    // given
    const created = await t.graphql(CREATE, { name: 'Ada' }, { env });
    const id = created.body.data.customerCreate.customer.id as string;

    // when
    forks = vi.spyOn(EntityManager.prototype, 'fork');
    const read = await t.graphql(READ, { id }, { env });
    const forksOfRead = forks.mock.calls.length;
    const written = await t.graphql(
      `mutation { a: customerCreate(input: { name: "Bea" }) { customer { name } } b: customerCreate(input: { name: "Cy" }) { customer { name } } }`,
      {},
      { env },
    );
    const forksOfWrite = forks.mock.calls.length - forksOfRead;

    // then: authenticate's fork only, and a transaction (fork) per mutation field as before
    expect(forksOfRead).toBe(1);
    expect(forksOfWrite).toBeGreaterThanOrEqual(3);
    expect(read.body).toEqual({
      data: { customer: { id, name: 'Ada' }, customers: { edges: [{ node: { name: 'Ada' } }] } },
    });
    expect(written.body).toEqual({
      data: { a: { customer: { name: 'Bea' } }, b: { customer: { name: 'Cy' } } },
    });
    const rows = await t.sql<{ name: string }>(
      'select name from customer where environment_id = $1 order by name',
      [env.id],
    );
    expect(rows.map((row) => row.name)).toEqual(['Ada', 'Bea', 'Cy']);
  });

  it('answers a failing field with its error, and the next query on the same connections reads as before', async () => {
    // when: a query whose field is refused (a negative page size), then plain reads
    const failed = await t.graphql(`query { customers(first: -1) { edges { node { id } } } }`, {}, { env });
    const reads = await Promise.all(
      Array.from({ length: 12 }, () =>
        t.graphql(`query { customers(first: 10) { totalCount } }`, {}, { env }),
      ),
    );

    // then: the refusal is the same as ever, and no later request finds a transaction left open
    expect(failed.body.errors?.length).toBeGreaterThan(0);
    for (const read of reads) expect(read.body).toEqual({ data: { customers: { totalCount: 3 } } });
    const open = await t.sql<{ count: string }>(
      `select count(*) from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`,
    );
    expect(Number(open[0]?.count)).toBe(0);
  });
});

/**
 * What a selection reads is worked out once per parsed document and per the field nodes merged into a
 * field (perSelection): a fragment's field merged with more fields in one place, and alone in another,
 * is two selections, and each answers with its own columns.
 */
describe('a selection worked out once per document', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment();
    const created = await t.graphql(CREATE, { name: 'Dee' }, { env });
    customerId = created.body.data.customerCreate.customer.id as string;
    const invoice = await t.rest('POST', '/invoices', {
      env,
      body: {
        customerId,
        currency: 'eur',
        date: '2026-03-01',
        memo: 'March',
        items: [{ quantity: 2, unitAmount: 1000, title: 'Seats' }],
      },
    });
    expect(invoice.status).toBe(201);
  });

  it('answers a fragment’s field alone and merged with other fields, each with its columns, request after request', async () => {
    // given: one text; `invoices` of the fragment alone under `a`, merged with a selection of `memo` under `b`
    const document = `query($id: UUID!) {
      a: customer(id: $id) { ...Invoices }
      b: customer(id: $id) { ...Invoices invoices(first: 5) { edges { node { memo items { title } } } } }
      c: customer(id: $id) { name }
      d: customer(id: $id) { email name }
    }
    fragment Invoices on Customer { invoices(first: 5) { edges { node { status } } } }`;

    // when: sent three times, so the later ones find what the first worked out
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await t.graphql(document, { id: customerId }, { env }));

    // then
    for (const answer of answers) {
      expect(answer.body).toEqual({
        data: {
          a: { invoices: { edges: [{ node: { status: 'draft' } }] } },
          b: {
            invoices: { edges: [{ node: { status: 'draft', memo: 'March', items: [{ title: 'Seats' }] } }] },
          },
          c: { name: 'Dee' },
          d: { email: null, name: 'Dee' },
        },
      });
    }
  });
});
