import { describe, expect, it } from 'vitest';
import { billingFixtures, midnight } from '../subscription/fixtures.ts';
import { gql } from '../support/catalog.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = billingFixtures(t);

type Item = {
  quantity: number;
  unitAmount: number;
  description: string;
  periodStart: string;
  amount: number;
};
type Invoice = { id: string; status: string; totalExclVat: number; items: Item[] };

/** An invoice line as `start | quantity × unitAmount = amount | description`. */
const show = (line: Item) =>
  `${line.periodStart} | ${line.quantity} × ${line.unitAmount} = ${line.amount} | ${line.description}`;

async function deleteDraft(env: TestEnvironment, id: string) {
  const data = await gql(
    t,
    env,
    'mutation ($id: UUID!) { invoiceDelete(id: $id) { deletedInvoiceId userErrors { field message code } } }',
    { id },
  );
  expect(data.invoiceDelete.userErrors).toEqual([]);
}

/** The billed_period rows of the environment: start, amount and which of `invoices` holds it. */
async function ledger(env: TestEnvironment, invoices: Invoice[]) {
  const rows = await t.sql<{ period_start: string; amount: string; invoice_id: string | null }>(
    `select period_start::text, amount::text, invoice_id from billed_period
      where environment_id = $1 order by period_start, amount`,
    [env.id],
  );
  return rows.map((row) => [
    row.period_start,
    Number(row.amount),
    row.invoice_id === null ? null : invoices.findIndex((invoice) => invoice.id === row.invoice_id),
  ]);
}

/** A draft-invoice customer with a graduated item (12 seats) and a fee item (3 × 1000), from Mar 1. */
async function given() {
  const env = await t.createEnvironment();
  const product = await f.createProduct(env, { name: 'Seat' });
  const customerId = await f.createCustomer(env, { collectionMode: 'draft_invoice' });
  const graduated = await f.createPrice(env, {
    name: 'Graduated',
    priceModel: 'graduated',
    pricing: {
      eur: {
        tiers: [
          { upTo: 10, unitAmount: 500, flatAmount: 1000 },
          { upTo: null, unitAmount: 400 },
        ],
      },
    },
  });
  const fee = await f.createPrice(env, { name: 'Fee', pricing: { eur: { amount: 1000 } } });
  await f.subscribe(env, {
    customerId,
    term: { start: '2026-03-01' },
    items: [
      { productId: product.id, priceId: graduated.id, quantity: 12 },
      { productId: product.id, priceId: fee.id, quantity: 3 },
    ],
  });
  return { env, customerId };
}

const MARCH = [
  '2026-03-01 | 10 × 500 = 5000 | Graduated, tier 1, up to 10',
  '2026-03-01 | 1 × 1000 = 1000 | Graduated, tier 1 flat amount',
  '2026-03-01 | 2 × 400 = 800 | Graduated, tier 2, over 10',
  '2026-03-01 | 3 × 1000 = 3000 | Fee',
];
const APRIL = MARCH.map((line) => line.replace('2026-03-01', '2026-04-01'));
const MAY = MARCH.map((line) => line.replace('2026-03-01', '2026-05-01'));

describe('deleting a billing run draft releases exactly its periods', () => {
  it('the next run bills the periods of a deleted draft again, once, beside its own', async () => {
    // given March billed on a draft, which is then deleted
    const { env, customerId } = await given();
    await f.runBilling(env, midnight('2026-03-01'));
    const [march] = (await f.invoicesOf(env, customerId)) as Invoice[];
    expect(march?.items.map(show)).toEqual(MARCH);
    await deleteDraft(env, march?.id as string);

    // when the next run is made, and made again
    const run = await f.runBilling(env, midnight('2026-04-01'));
    const again = await f.runBilling(env, midnight('2026-04-01'));

    // then one invoice bills March again, as it was, and April; the second run bills nothing
    expect(run).toMatchObject({ status: 'succeeded', invoiceCount: 1, periodCount: 2 });
    expect(again).toMatchObject({ status: 'succeeded', invoiceCount: 0, periodCount: 0 });
    const invoices = (await f.invoicesOf(env, customerId)) as Invoice[];
    expect(invoices).toHaveLength(1);
    expect(invoices[0]?.items.map(show)).toEqual([...APRIL, ...MARCH]);
    expect(invoices[0]?.totalExclVat).toBe(2 * (6800 + 3000));
    // and each period is recorded once, on the new invoice
    expect(await ledger(env, invoices)).toEqual([
      ['2026-03-01', 3000, 0],
      ['2026-03-01', 6800, 0],
      ['2026-04-01', 3000, 0],
      ['2026-04-01', 6800, 0],
    ]);
  });

  it('releases only the deleted draft: periods on another draft or booked stay billed', async () => {
    // given March on one draft, April on another, and March's draft deleted
    const { env, customerId } = await given();
    await f.runBilling(env, midnight('2026-03-01'));
    await f.runBilling(env, midnight('2026-04-01'));
    const [march, april] = (await f.invoicesOf(env, customerId)) as Invoice[];
    expect(april?.items.map(show)).toEqual(APRIL);
    await deleteDraft(env, march?.id as string);

    // when May is billed
    await f.runBilling(env, midnight('2026-05-01'));

    // then May's invoice bills May and March; April stays on its draft, billed once
    const invoices = (await f.invoicesOf(env, customerId)) as Invoice[];
    expect(invoices.map((invoice) => invoice.id)).toEqual([april?.id, expect.any(String)]);
    expect(invoices[0]?.items.map(show)).toEqual(APRIL);
    expect(invoices[1]?.items.map(show)).toEqual([...MAY, ...MARCH]);
    expect(await ledger(env, invoices)).toEqual([
      ['2026-03-01', 3000, 1],
      ['2026-03-01', 6800, 1],
      ['2026-04-01', 3000, 0],
      ['2026-04-01', 6800, 0],
      ['2026-05-01', 3000, 1],
      ['2026-05-01', 6800, 1],
    ]);
  });

  it('removing one line of a draft releases exactly its period (with the lines that bill it together); the next run bills it again', async () => {
    // given March on a draft, and its graduated tier-2 line removed
    const { env, customerId } = await given();
    await f.runBilling(env, midnight('2026-03-01'));
    const [march] = (await f.invoicesOf(env, customerId)) as Invoice[];
    const [line] = await t.sql<{ id: string }>(
      `select id from invoice_item where environment_id = $1 and invoice_id = $2 and description like '%tier 2%'`,
      [env.id, march?.id],
    );
    const removed = await gql(
      t,
      env,
      'mutation ($id: UUID!) { invoiceItemRemove(id: $id) { invoice { totalExclVat } userErrors { code } } }',
      { id: line?.id },
    );
    // then the period's three graduated lines go, the fee line stays, and the period is on no invoice
    expect(removed.invoiceItemRemove).toEqual({ invoice: { totalExclVat: 3000 }, userErrors: [] });
    let invoices = (await f.invoicesOf(env, customerId)) as Invoice[];
    expect(invoices[0]?.items.map(show)).toEqual([MARCH[3]]);
    expect(await ledger(env, invoices)).toEqual([
      ['2026-03-01', 3000, 0],
      ['2026-03-01', 6800, null],
    ]);

    // when April is billed (twice)
    await f.runBilling(env, midnight('2026-04-01'));
    await f.runBilling(env, midnight('2026-04-01'));

    // then April's invoice bills April and the released March period once; the fee keeps its draft
    invoices = (await f.invoicesOf(env, customerId)) as Invoice[];
    expect(invoices).toHaveLength(2);
    expect(invoices[1]?.items.map(show)).toEqual([...APRIL, ...MARCH.slice(0, 3)]);
    expect(await ledger(env, invoices)).toEqual([
      ['2026-03-01', 3000, 0],
      ['2026-03-01', 6800, 1],
      ['2026-04-01', 3000, 1],
      ['2026-04-01', 6800, 1],
    ]);
  });
});
