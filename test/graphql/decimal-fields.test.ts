import { isObjectType } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

const LINES = 'items { quantity unitAmount tax { taxRate } }';

describe('decimal columns exposed as Float (exposeDecimal)', () => {
  let env: TestEnvironment;
  let created: { items: unknown[] };

  beforeAll(async () => {
    // given a draft with fractional quantities and prices, a taxed line and an untaxed one
    env = await t.createEnvironment('Decimals');
    await f.createTaxCode(env, 'VAT21', '21.5');
    const customerId = await f.createCustomer(env);
    const data = await f.gql(
      env,
      `mutation ($input: InvoiceCreateInput!) { invoiceCreate(input: $input) { invoice { ${LINES} } } }`,
      {
        input: {
          customerId,
          date: '2026-03-01',
          items: [
            { quantity: 1.5, unitAmount: 999.5, title: 'Hours', taxCode: 'VAT21' },
            { quantity: 1000, unitAmount: 0.25, title: 'API calls' },
          ],
        },
      },
    );
    created = data.invoiceCreate.invoice;
  });

  it('answers Number() of the stored text, through the compiled query and the standard executor alike', async () => {
    // when the lines are read by a query (graphql-jit) and were answered by the mutation (graphql-js)
    const page = await f.gql(env, `{ invoices(first: 5) { edges { node { ${LINES} } } } }`);
    const stored = await t.sql<{ quantity: string; unit_amount: string; tax_rate: string | null }>(
      `select quantity::text, unit_amount::text, tax_rate::text from invoice_item
        where environment_id = $1 order by id`,
      [env.id],
    );

    // then both answer each line's stored decimals as numbers, and an untaxed line's rate as null
    const expected = stored.map((row) => ({
      quantity: Number(row.quantity),
      unitAmount: Number(row.unit_amount),
      tax: { taxRate: row.tax_rate === null ? null : Number(row.tax_rate) },
    }));
    expect(expected).toEqual([
      { quantity: 1.5, unitAmount: 999.5, tax: { taxRate: 21.5 } },
      { quantity: 1000, unitAmount: 0.25, tax: { taxRate: null } },
    ]);
    expect(page.invoices.edges[0].node.items).toEqual(expected);
    expect(created.items).toEqual(expected);
  });

  it('leaves the fields without a resolver, so the compiled query reads the property inline', () => {
    // graphql-jit builds a resolve info and the response path for every value of a field with a
    // resolver: 54,000 of them per field for the heaviest page the limits allow
    const fieldsOf = (name: string) => {
      const type = schema.getType(name);
      if (!isObjectType(type)) throw new Error(`${name} is not an object type`);
      return type.getFields();
    };

    expect(fieldsOf('InvoiceItem').quantity?.resolve).toBeUndefined();
    expect(fieldsOf('InvoiceItem').unitAmount?.resolve).toBeUndefined();
    expect(fieldsOf('InvoiceItemTax').taxRate?.resolve).toBeUndefined();
  });
});
