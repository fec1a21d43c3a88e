import { getNamedType, isLeafType } from 'graphql';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { objectType, select } from '../support/selection.ts';
import { openLoggedOrm } from '../support/statements.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

const customerType = objectType('Customer');

describe('customer(id) reads only the columns its selection needs', () => {
  let env: TestEnvironment;
  let ids: string[];

  beforeAll(async () => {
    // given customers with every optional part given, with none, and one changed after its creation
    env = await t.createEnvironment();
    const full = await f.createCustomer(env, {
      name: 'Alice',
      companyName: 'Alice BV',
      handle: 'alice',
      email: 'alice@example.com',
      paymentTerm: 'net14',
      collectionMode: 'draft_invoice',
      billingAddress: { street1: '1 Main Street', postalCode: '9000', city: 'Ghent', country: 'BE' },
      taxIds: [{ type: 'eu_vat', value: 'BE0123456789' }],
      taxExempt: 'reverse_charge',
      timezone: 'Europe/Brussels',
    });
    const bare = await f.createCustomer(env, { name: 'Bob', currency: null });
    const changed = await f.createCustomer(env, { name: 'Carol' });
    await f.gql(
      env,
      'mutation ($id: UUID!) { customerUpdate(id: $id, input: { email: "carol@example.com" }) { userErrors { message } } }',
      { id: changed },
    );
    await f.createInvoice(env, {
      customerId: full,
      items: [{ quantity: 1, unitAmount: 100, title: 'Seat' }],
    });
    ids = [full, bare, changed];
  });

  /** customer(id) with `selection`, and the same customer read whole (node(id) reads through byId). */
  async function narrowedAndWhole(selection: string) {
    const fields = ids.map(
      (id, index) =>
        `c${index}: customer(id: "${id}") { id ${selection} } ` +
        `w${index}: node(id: "${id}") { ... on Customer { id ${selection} } }`,
    );
    const data = await f.gql(env, `{ ${fields.join(' ')} }`);
    return {
      narrowed: ids.map((_, index) => data[`c${index}`]),
      whole: ids.map((_, index) => data[`w${index}`]),
    };
  }

  it('answers every field of a customer alone as the customer read whole answers it', async () => {
    for (const field of Object.keys(customerType.getFields())) {
      const { narrowed, whole } = await narrowedAndWhole(select(customerType, field));
      expect(narrowed, field).toEqual(whole);
      expect(narrowed[0], field).not.toBeNull();
    }
  });

  it('answers all its leaves together, and with the address, as whole rows do', async () => {
    const leaves = Object.keys(customerType.getFields())
      .filter((field) => isLeafType(getNamedType(customerType.getFields()[field]?.type)))
      .join(' ');
    for (const selection of [leaves, `${leaves} billingAddress { city country }`, 'name taxIds { value }']) {
      const { narrowed, whole } = await narrowedAndWhole(selection);
      expect(narrowed, selection).toEqual(whole);
    }
  });

  it('answers null for an id it does not have and for another environment’s customer', async () => {
    const other = await t.createEnvironment();
    const theirs = await f.createCustomer(other, { name: 'Dave' });
    const data = await f.gql(
      env,
      `{ missing: customer(id: "0190a000-0000-7000-8000-000000000000") { name } theirs: customer(id: "${theirs}") { name email } }`,
    );
    expect(data).toEqual({ missing: null, theirs: null });
  });

  it('reads a narrowed selection in one statement with only its columns, aliases of it together', async () => {
    const { orm, log } = await openLoggedOrm(t.databaseUrl);
    try {
      const app = createApp({ orm, logger: pino({ level: 'silent' }) });
      const read = async (query: string) => {
        log.statements = [];
        const response = await app.fetch('http://test/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...env.headers },
          body: JSON.stringify({ query }),
        });
        const body = await response.json();
        expect(body.errors).toBeUndefined();
        return { data: body.data, statements: log.work() };
      };
      await read('{ __typename }'); // the first request also sees the ORM's connection check
      const { data, statements } = await read(
        `{ a: customer(id: "${ids[0]}") { name billingAddress { city } } b: customer(id: "${ids[1]}") { name billingAddress { city } } }`,
      );

      expect(data).toEqual({
        a: { name: 'Alice', billingAddress: { city: 'Ghent' } },
        b: { name: 'Bob', billingAddress: { city: null } },
      });
      expect(statements).toHaveLength(1);
      const [statement] = statements as [string];
      for (const column of ['"name"', '"billing_address"']) expect(statement).toContain(column);
      for (const column of ['"email"', '"tax_ids"', '"company_name"', '"created_at"']) {
        expect(statement).not.toContain(column);
      }

      // a field that does not say what it reads (its invoices) reads the whole row, as before
      const whole = await read(`{ customer(id: "${ids[0]}") { name invoices { totalCount } } }`);
      expect(whole.data.customer).toEqual({ name: 'Alice', invoices: { totalCount: 1 } });
      expect(whole.statements[0]).toContain('"tax_ids"');
    } finally {
      await orm.close();
    }
  });
});
