import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { invoiceFixtures } from './fixtures.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

// POST /invoices reads the tax codes its items name in the customer's statement, and a product's (by
// sku) after it: the rates and the refusals must be those of the tax_code rows either way.
describe('POST /invoices: the tax codes of its items', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    // given two tax codes, a product carrying a third, and another environment with a code of its own
    env = await t.createEnvironment('Tax codes');
    await f.createTaxCode(env, 'VAT7.5', '7.5');
    await f.createTaxCode(env, "O'Hare, 20", '20');
    await f.createTaxCode(env, 'REDUCED', '5.25');
    await f.createProduct(env, { handle: 'BOOK', name: 'Book', taxCode: 'REDUCED' });
    customerId = await f.createCustomer(env);
    const other = await t.createEnvironment('Other tax codes');
    await f.createTaxCode(other, 'FOREIGN', '10');
  });

  it("applies each named code's rate and a product's, as stored", async () => {
    // when the items name two codes (one twice), take one from a product and have none
    const invoice = await f.createInvoice(env, {
      customerId,
      items: [
        { quantity: 1, unitAmount: 1000, title: 'A', taxCode: 'VAT7.5' },
        { quantity: 1, unitAmount: 1000, title: 'B', taxCode: "O'Hare, 20" },
        { quantity: 2, unitAmount: 1000, title: 'C', taxCode: 'VAT7.5' },
        { quantity: 1, unitAmount: 1000, sku: 'BOOK' },
        { quantity: 1, unitAmount: 1000, title: 'Untaxed' },
      ],
    });
    // then every line carries its code's rate, and the stored lines say the same
    const lines = invoice.items.map((item: Record<string, unknown>) => [item.title, item.taxAmount]);
    expect(lines).toEqual([
      ['A', 75],
      ['B', 200],
      ['C', 150],
      ['Book', 53],
      ['Untaxed', 0],
    ]);
    const stored = await t.sql(
      'select tax_code, tax_rate::text as rate from invoice_item where invoice_id = $1 order by id',
      [invoice.id],
    );
    expect(stored).toEqual([
      { tax_code: 'VAT7.5', rate: '7.5000' },
      { tax_code: "O'Hare, 20", rate: '20.0000' },
      { tax_code: 'VAT7.5', rate: '7.5000' },
      { tax_code: 'REDUCED', rate: '5.2500' },
      { tax_code: null, rate: null },
    ]);
  });

  it("refuses a code that does not exist here, another environment's too, naming each item", async () => {
    // when items name an unknown code and another environment's code beside a known one
    const response = await t.rest('POST', '/invoices', {
      env,
      body: {
        customerId,
        currency: null,
        date: '2026-03-01',
        items: [
          { quantity: 1, unitAmount: 100, title: 'Known', taxCode: 'VAT7.5' },
          { quantity: 1, unitAmount: 100, title: 'Unknown', taxCode: 'NOPE' },
          { quantity: 1, unitAmount: 100, title: 'Foreign', taxCode: 'FOREIGN' },
        ],
      },
    });
    // then it answers 422 INVALID_REFERENCE at both items, and wrote no invoice
    expectProblem(response, 422);
    expect(response.body.code).toBe('INVALID_REFERENCE');
    expect(response.body.errors.map((error: { pointer: string }) => error.pointer)).toEqual([
      '/items/1/taxCode',
      '/items/2/taxCode',
    ]);
    const invoices = await t.sql('select 1 from invoice where environment_id = $1 and memo is null', [
      env.id,
    ]);
    expect(invoices).toHaveLength(1);
  });
});
