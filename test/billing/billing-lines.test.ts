import { describe, expect, it } from 'vitest';
import { priceAmount } from '../../src/modules/price/pricing.ts';
import { billingFixtures, midnight } from '../subscription/fixtures.ts';
import { gql } from '../support/catalog.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = billingFixtures(t);

type Item = {
  quantity: number;
  unitAmount: number;
  description: string | null;
  periodStart: string;
  periodEnd: string;
  amount: number;
  taxAmount: number;
};

/** An invoice line as `quantity × unitAmount = amount | description`. */
const show = (line: Item) => `${line.quantity} × ${line.unitAmount} = ${line.amount} | ${line.description}`;

const PREVIEW = `query ($customerId: UUID, $asOf: DateTime) {
  invoicePreview(customerId: $customerId, asOf: $asOf) {
    currency date totalExclVat totalVat totalInclVat
    items { quantity unitAmount description periodStart periodEnd amount taxAmount }
  }
}`;

const GRADUATED = {
  tiers: [
    { upTo: 10, unitAmount: 500, flatAmount: 1000 },
    { upTo: 100, unitAmount: 400 },
    { upTo: null, unitAmount: 300, flatAmount: 50 },
  ],
};
const VOLUME = {
  tiers: [
    { upTo: 10, unitAmount: 500 },
    { upTo: 100, unitAmount: 400, flatAmount: 2500 },
    { upTo: null, unitAmount: 300 },
  ],
};
const PACKAGE = { amount: 1000, packageSize: 100 };
// Half a cent a unit in both tiers: each line rounds 1.5 up to 2, the amount rounds 3 once.
const HALVES = {
  tiers: [
    { upTo: 3, unitAmount: 0.5 },
    { upTo: null, unitAmount: 0.5 },
  ],
};

async function given(env: TestEnvironment) {
  const product = await f.createProduct(env, { name: 'Seat', handle: 'seat' });
  const customerId = await f.createCustomer(env, { collectionMode: 'draft_invoice' });
  const graduated = await f.createPrice(env, {
    name: 'Graduated',
    priceModel: 'graduated',
    pricing: { eur: GRADUATED },
  });
  const volume = await f.createPrice(env, { name: 'Volume', priceModel: 'volume', pricing: { eur: VOLUME } });
  const pack = await f.createPrice(env, {
    name: 'Package',
    priceModel: 'package',
    pricing: { eur: PACKAGE },
  });
  const halves = await f.createPrice(env, {
    name: 'Halves',
    priceModel: 'graduated',
    pricing: { eur: HALVES },
  });
  await f.subscribe(env, {
    customerId,
    term: { start: '2026-03-01' },
    items: [
      { productId: product.id, priceId: graduated.id, quantity: 120 },
      { productId: product.id, priceId: volume.id, quantity: 40 },
      { productId: product.id, priceId: pack.id, quantity: 250 },
      { productId: product.id, priceId: halves.id, quantity: 6 },
    ],
  });
  return { customerId };
}

describe('readable lines of tiered and package prices', () => {
  it('a run bills each tier reached, flat amounts and packages at their real quantities, adding up to the price amount', async () => {
    // given a customer with a graduated, a volume, a package and a half-cent graduated item
    const env = await t.createEnvironment();
    const { customerId } = await given(env);

    // when a run bills March
    const run = await f.runBilling(env, midnight('2026-03-01'));

    // then one draft holds, for each period, lines a reader can multiply out
    expect(run).toMatchObject({ status: 'succeeded', invoiceCount: 1, periodCount: 4 });
    const [invoice] = await f.invoicesOf(env, customerId);
    expect(invoice.items.map(show)).toEqual([
      '10 × 500 = 5000 | Graduated, tier 1, up to 10',
      '1 × 1000 = 1000 | Graduated, tier 1 flat amount',
      '90 × 400 = 36000 | Graduated, tier 2, over 10 up to 100',
      '20 × 300 = 6000 | Graduated, tier 3, over 100',
      '1 × 50 = 50 | Graduated, tier 3 flat amount',
      '40 × 400 = 16000 | Volume, tier 2, over 10 up to 100',
      '1 × 2500 = 2500 | Volume, tier 2 flat amount',
      '3 × 1000 = 3000 | Package, packages of 100 (quantity 250)',
      '3 × 0.5 = 2 | Halves, tier 1, up to 3',
      '3 × 0.5 = 2 | Halves, tier 2, over 3',
      '1 × -1 = -1 | Halves, rounding of the tier lines to the amount rounded once',
    ]);
    for (const line of invoice.items) {
      expect([line.periodStart, line.periodEnd, line.sku, line.title]).toEqual([
        '2026-03-01',
        '2026-04-01',
        'seat',
        'Seat',
      ]);
    }
    // by hand: 5000 + 1000 + 36000 + 6000 + 50 = 48050; 16000 + 2500 = 18500; 3000; 3
    const amounts = [48050, 18500, 3000, 3];
    expect([
      priceAmount('graduated', GRADUATED, 120),
      priceAmount('volume', VOLUME, 40),
      priceAmount('package', PACKAGE, 250),
      priceAmount('graduated', HALVES, 6),
    ]).toEqual(amounts);
    expect(invoice.totalExclVat).toBe(48050 + 18500 + 3000 + 3);

    // and each billed period records the price model's amount, once
    const ledger = await t.sql<{ amount: string; quantity: string }>(
      `select amount::text, quantity::float::text as quantity from billed_period
        where environment_id = $1 and invoice_id = $2 order by billed_period.amount desc`,
      [env.id, invoice.id],
    );
    expect(ledger.map((row) => [Number(row.quantity), Number(row.amount)])).toEqual([
      [120, 48050],
      [40, 18500],
      [250, 3000],
      [6, 3],
    ]);
  });

  it('invoicePreview shows the same lines the run then writes', async () => {
    // given the same customer, not yet billed
    const env = await t.createEnvironment();
    const { customerId } = await given(env);

    // when March is previewed, then billed
    const [preview] = (await gql(t, env, PREVIEW, { customerId, asOf: midnight('2026-03-01') }))
      .invoicePreview;
    await f.runBilling(env, midnight('2026-03-01'));
    const [invoice] = await f.invoicesOf(env, customerId);

    // then the preview was the invoice, line for line
    const figures = (items: Item[]) =>
      items.map(({ quantity, unitAmount, description, periodStart, periodEnd, amount, taxAmount }) => ({
        quantity,
        unitAmount,
        description,
        periodStart,
        periodEnd,
        amount,
        taxAmount,
      }));
    expect(preview.items).toHaveLength(11);
    expect(figures(invoice.items)).toEqual(figures(preview.items));
    expect(preview.totalExclVat).toBe(invoice.totalExclVat);
    expect(preview.totalInclVat).toBe(invoice.totalInclVat);
  });

  it('keeps the lines of one period on one invoice when they reach the line limit', async () => {
    // given a daily graduated price of 100 tiers, each with a flat amount: 200 lines a period
    const env = await t.createEnvironment();
    const product = await f.createProduct(env, { name: 'Seat' });
    const customerId = await f.createCustomer(env);
    const tiers = Array.from({ length: 100 }, (_, index) => ({
      upTo: index === 99 ? null : index + 1,
      unitAmount: 10,
      flatAmount: 1,
    }));
    const price = await f.createPrice(env, {
      name: 'Steps',
      termUnit: 'day',
      priceModel: 'graduated',
      pricing: { eur: { tiers } },
    });
    await f.subscribe(env, {
      customerId,
      term: { start: '2026-03-01' },
      items: [{ productId: product.id, priceId: price.id, quantity: 100 }],
    });

    // when a run bills six days at once (1,200 lines)
    const run = await f.runBilling(env, midnight('2026-03-06'));

    // then five whole periods fill the first invoice (1,000 lines) and the sixth starts another
    expect(run).toMatchObject({ status: 'succeeded', invoiceCount: 2, periodCount: 6 });
    const invoices: { id: string; totalExclVat: number; items: Item[] }[] = await f.invoicesOf(
      env,
      customerId,
    );
    expect(invoices.map((invoice) => [invoice.items.length, invoice.totalExclVat])).toEqual([
      [1000, 5 * 1100],
      [200, 1100],
    ]);
    expect(invoices[1]?.items.every((line) => line.periodStart === '2026-03-06')).toBe(true);
    const billed = await t.sql<{ invoice_id: string; periods: string }>(
      'select invoice_id, count(*) as periods from billed_period where environment_id = $1 group by invoice_id',
      [env.id],
    );
    expect(Object.fromEntries(billed.map((row) => [row.invoice_id, Number(row.periods)]))).toEqual({
      [invoices[0]?.id as string]: 5,
      [invoices[1]?.id as string]: 1,
    });
  });
});
