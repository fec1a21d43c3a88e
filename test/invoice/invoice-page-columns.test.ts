import { getNamedType, isLeafType } from 'graphql';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { objectType, select } from '../support/selection.ts';
import { openLoggedOrm } from '../support/statements.ts';
import { invoiceFixtures } from './fixtures.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

const fieldsOf = (name: string) => Object.keys(objectType(name).getFields());

describe('a page of invoices reads only the columns its selection needs', () => {
  let env: TestEnvironment;
  let ids: string[];
  let cursors: string[];

  beforeAll(async () => {
    // given a draft, booked invoices unpaid, settled, voided and written off, and a credit note, whose
    // lines have tax codes, discounts, periods, skus and descriptions, for two customers
    env = await t.createEnvironment();
    await f.createTaxCode(env, 'VAT21', '21');
    const alice = await f.createCustomer(env, {
      name: 'Alice',
      companyName: 'Alice BV',
      email: 'alice@example.com',
      billingAddress: { street1: '1 Main Street', city: 'Ghent', country: 'BE' },
    });
    const bob = await f.createCustomer(env, { name: 'Bob', handle: 'bob' });
    const items = [
      { quantity: 2, unitAmount: 1250, title: 'Seats', taxCode: 'VAT21', sku: 'S-1' },
      {
        quantity: 1.5,
        unitAmount: 999.5,
        title: 'Hours',
        description: 'Consulting',
        discount: { percentage: 10, amount: 0 },
        periodStart: '2026-02-01',
        periodEnd: '2026-02-28',
      },
    ];
    const create = async (memo: string, customerId: string) =>
      (await f.createInvoice(env, { customerId, memo, items })).id as string;
    const book = (id: string) =>
      f.gql(env, 'mutation ($id: UUID!) { invoiceBook(id: $id) { userErrors { message } } }', { id });
    await create('draft', alice);
    const unpaid = await create('unpaid', bob);
    const settled = await create('settled', alice);
    const voided = await create('voided', bob);
    const writtenOff = await create('written off', alice);
    for (const id of [unpaid, settled, voided, writtenOff]) await book(id);
    await f.gql(
      env,
      `mutation ($id: UUID!) { invoiceSettle(id: $id, input: { date: "2026-03-05", amount: 100, reference: "r-1", note: "part" }) { userErrors { message } } }`,
      { id: settled },
    );
    await f.gql(env, 'mutation ($id: UUID!) { invoiceVoid(id: $id) { userErrors { message } } }', {
      id: voided,
    });
    await f.gql(
      env,
      'mutation ($id: UUID!) { invoiceMarkUncollectible(id: $id) { userErrors { message } } }',
      { id: writtenOff },
    );
    const note = await f.gql(
      env,
      'mutation ($id: UUID!) { creditNoteCreate(invoiceId: $id, input: { date: "2026-03-10", memo: "credit" }) { creditNote { id } } }',
      { id: unpaid },
    );
    await book(note.creditNoteCreate.creditNote.id);
    // a customer changed after booking: its invoices' snapshots and the live customer differ
    await f.gql(
      env,
      'mutation ($id: UUID!) { customerUpdate(id: $id, input: { name: "Bob Renamed" }) { userErrors { message } } }',
      { id: bob },
    );
    ids = (
      await t.sql<{ id: string }>('select id from invoice where environment_id = $1 order by id', [env.id])
    ).map((row) => row.id);
    expect(ids).toHaveLength(6);
    const page = await f.gql(env, '{ invoices(first: 50) { edges { cursor } } }');
    cursors = page.invoices.edges.map((edge: { cursor: string }) => edge.cursor);
  });

  /**
   * The page's nodes with `selection`, and the same invoices each read by id (the loaders' whole rows)
   * in the same request: a narrowed row must neither answer differently nor reach another field. A
   * selection too costly for one request (a list in each of 1,000 lines) goes a page of one at a time.
   */
  async function pageAndAlone(selection: string) {
    const aliases = ids.map((id, index) => `i${index}: invoice(id: "${id}") { id ${selection} }`);
    const response = await t.graphql(
      `{ page: invoices(first: 50) { edges { node { id ${selection} } } } ${aliases.join(' ')} }`,
      undefined,
      { env },
    );
    const [error] = response.body.errors ?? [];
    if (error?.extensions?.code !== 'QUERY_TOO_COMPLEX') {
      expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
      const data = response.body.data;
      return {
        page: data.page.edges.map((edge: { node: unknown }) => edge.node),
        alone: ids.map((_, index) => data[`i${index}`]),
      };
    }
    const pairs = await Promise.all(
      ids.map((id, index) =>
        f.gql(
          env,
          `query ($after: String) { page: invoices(first: 1, after: $after) { edges { node { id ${selection} } } }
            alone: invoice(id: "${id}") { id ${selection} } }`,
          { after: cursors[index - 1] ?? null },
        ),
      ),
    );
    return {
      page: pairs.map((data) => data.page.edges[0]?.node),
      alone: pairs.map((data) => data.alone),
    };
  }

  it('answers every field of an invoice alone as the invoice read whole answers it', async () => {
    const invoice = objectType('Invoice');
    for (const field of fieldsOf('Invoice')) {
      const { page, alone } = await pageAndAlone(select(invoice, field));
      expect(page, field).toEqual(alone);
    }
  });

  it('answers every field of its items, settlements and customers alone as whole rows do', async () => {
    const parts = [
      ['items', 'InvoiceItem'],
      ['settlements', 'Settlement'],
      ['liveCustomer', 'Customer'],
      ['customer', 'InvoiceCustomerSnapshot'],
    ] as const;
    for (const [part, typeName] of parts) {
      const type = objectType(typeName);
      for (const field of fieldsOf(typeName)) {
        const { page, alone } = await pageAndAlone(`${part} { ${select(type, field)} }`);
        expect(page, `${part}.${field}`).toEqual(alone);
      }
    }
  });

  it('answers them all together, and pairs of parts, as whole rows do', async () => {
    const invoice = objectType('Invoice');
    const leaves = fieldsOf('Invoice')
      .filter((field) => isLeafType(getNamedType(invoice.getFields()[field]?.type)))
      .join(' ');
    const selections = [
      leaves,
      `status totalDue items { quantity tax { taxRate } } settlements { amount }`,
      `customer { name } liveCustomer { name email }`,
      `handle items { amount discount { percentage } } liveCustomer { handle } customer { billingAddress { city } }`,
    ];
    for (const selection of selections) {
      const { page, alone } = await pageAndAlone(selection);
      expect(page, selection).toEqual(alone);
    }
  });

  it('reads the page of a narrowed selection in one statement, with only the columns it needs', async () => {
    const { orm, log } = await openLoggedOrm(t.databaseUrl);
    try {
      const app = createApp({ orm, logger: pino({ level: 'silent' }) });
      const page = async () => {
        log.statements = [];
        const response = await app.fetch('http://test/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...env.headers },
          body: JSON.stringify({
            query: `{ invoices(first: 50) { edges { node {
              handle totalDue customer { name } items { title tax { taxRate } } settlements { amount }
            } } } }`,
          }),
        });
        expect((await response.json()).errors).toBeUndefined();
        return log.work();
      };
      await page(); // the first request also sees the ORM's connection check
      const statements = await page();

      expect(statements).toHaveLength(1);
      const [statement] = statements as [string];
      for (const column of ['"handle"', '"total_incl_vat"', '"title"', '"tax_rate"', '"name"']) {
        expect(statement).toContain(column);
      }
      for (const column of ['"memo"', '"seller_snapshot"', '"sku"', '"note"', '"email"', '"tax_ids"']) {
        expect(statement).not.toContain(column);
      }
    } finally {
      await orm.close();
    }
  });
});
