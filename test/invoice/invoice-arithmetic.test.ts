import { beforeAll, describe, expect, it } from 'vitest';
import {
  computeLine,
  InvoiceArithmeticError,
  invoiceTotals,
} from '../../src/modules/invoice/invoice.arithmetic.ts';
import { minorUnitDigits } from '../../src/money/currency.ts';
import { Decimal, roundHalfAwayFromZero } from '../../src/money/decimal.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { invoiceFixtures } from './fixtures.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

type Golden = {
  name: string;
  currency: string;
  quantity: number;
  unitAmount: number;
  discount?: { percentage?: number; amount?: number };
  taxRate: number | null;
  amount: number;
  taxAmount: number;
};

/** Amounts are minor units of `currency`: cents for EUR, yen for JPY, fils (1/1000) for KWD. */
const GOLDEN: Golden[] = [
  {
    name: '.5 rounds up',
    currency: 'EUR',
    quantity: 1,
    unitAmount: 2.5,
    taxRate: null,
    amount: 3,
    taxAmount: 0,
  },
  {
    name: '-.5 rounds down (away from zero)',
    currency: 'EUR',
    quantity: 1,
    unitAmount: -2.5,
    taxRate: null,
    amount: -3,
    taxAmount: 0,
  },
  {
    name: 'just under .5 rounds down',
    currency: 'EUR',
    quantity: 1,
    unitAmount: 2.499999,
    taxRate: null,
    amount: 2,
    taxAmount: 0,
  },
  {
    name: 'just under -.5 rounds towards zero',
    currency: 'EUR',
    quantity: -1,
    unitAmount: 2.499999,
    taxRate: null,
    amount: -2,
    taxAmount: 0,
  },
  {
    name: 'a tie that binary floating point misses (100 × 1.005 = 100.5)',
    currency: 'EUR',
    quantity: 100,
    unitAmount: 1.005,
    taxRate: null,
    amount: 101,
    taxAmount: 0,
  },
  {
    name: 'tax .5 rounds up',
    currency: 'EUR',
    quantity: 3,
    unitAmount: 0.5,
    taxRate: 25,
    amount: 2,
    taxAmount: 1,
  },
  {
    name: 'tax -.5 rounds down on a negative line',
    currency: 'EUR',
    quantity: 1,
    unitAmount: -2,
    taxRate: 25,
    amount: -2,
    taxAmount: -1,
  },
  {
    name: 'fractional unit amount (a quarter cent per call)',
    currency: 'EUR',
    quantity: 1234,
    unitAmount: 0.25,
    taxRate: 21,
    amount: 309,
    taxAmount: 65,
  },
  {
    name: 'fractional quantity and a fractional tax rate',
    currency: 'EUR',
    quantity: 1.5,
    unitAmount: 333,
    taxRate: 7.5,
    amount: 500,
    taxAmount: 38,
  },
  {
    name: 'a millionth of a cent rounds to nothing',
    currency: 'EUR',
    quantity: 1,
    unitAmount: 0.000001,
    taxRate: 25,
    amount: 0,
    taxAmount: 0,
  },
  {
    name: 'percentage plus amount discount',
    currency: 'EUR',
    quantity: 10,
    unitAmount: 99.99,
    discount: { percentage: 15, amount: 0.5 },
    taxRate: 25,
    amount: 849,
    taxAmount: 212,
  },
  {
    name: 'discounts on a negative line carry its sign',
    currency: 'EUR',
    quantity: -4,
    unitAmount: 250,
    discount: { percentage: 10, amount: -50 },
    taxRate: 20,
    amount: -850,
    taxAmount: -170,
  },
  {
    name: 'a 100 % discount',
    currency: 'EUR',
    quantity: 2,
    unitAmount: 1999,
    discount: { percentage: 100 },
    taxRate: 25,
    amount: 0,
    taxAmount: 0,
  },
  {
    name: 'a discount equal to the line',
    currency: 'EUR',
    quantity: 2,
    unitAmount: 1999,
    discount: { amount: 3998 },
    taxRate: null,
    amount: 0,
    taxAmount: 0,
  },
  {
    name: 'JPY, zero decimals: half a yen rounds up',
    currency: 'JPY',
    quantity: 3,
    unitAmount: 333.5,
    taxRate: 10,
    amount: 1001,
    taxAmount: 100,
  },
  {
    name: 'JPY, a percentage discount leaving half a yen',
    currency: 'JPY',
    quantity: 1,
    unitAmount: 1005,
    discount: { percentage: 10 },
    taxRate: 8,
    amount: 905,
    taxAmount: 72,
  },
  {
    name: 'KWD, three decimals: amounts in fils',
    currency: 'KWD',
    quantity: 7,
    unitAmount: 142.8575,
    taxRate: 5,
    amount: 1000,
    taxAmount: 50,
  },
  {
    name: 'KWD, a tie in the tax',
    currency: 'KWD',
    quantity: 1,
    unitAmount: 1250,
    discount: { amount: 0.125 },
    taxRate: 0.04,
    amount: 1250,
    taxAmount: 1,
  },
];

const lineOf = (golden: Golden) => ({
  quantity: String(golden.quantity),
  unitAmount: String(golden.unitAmount),
  discountPercentage: String(golden.discount?.percentage ?? 0),
  discountAmount: String(golden.discount?.amount ?? 0),
  taxRate: golden.taxRate === null ? null : String(golden.taxRate),
});

describe('line arithmetic (DESIGN §5), golden cases', () => {
  it('knows the minor units of the currencies in the table', () => {
    expect([minorUnitDigits('EUR'), minorUnitDigits('JPY'), minorUnitDigits('KWD')]).toEqual([2, 0, 3]);
  });

  it.each(GOLDEN)('$name', (golden) => {
    expect(computeLine(lineOf(golden))).toEqual({ amount: golden.amount, taxAmount: golden.taxAmount });
  });

  it('rounds half away from zero', () => {
    const rounded = ['0.5', '1.5', '2.5', '-0.5', '-1.5', '-2.5', '2.4999999', '-2.4999999'].map((value) =>
      roundHalfAwayFromZero(new Decimal(value)).toNumber(),
    );
    expect(rounded).toEqual([1, 2, 3, -1, -2, -3, 2, -2]);
  });

  it.each([
    { name: 'more than the line', unitAmount: '100', discountAmount: '100.000001' },
    { name: 'a surcharge on a positive line', unitAmount: '100', discountAmount: '-1' },
    { name: 'a discount against the sign of a negative line', unitAmount: '-100', discountAmount: '1' },
    { name: 'any discount on a zero line', unitAmount: '0', discountAmount: '1' },
  ])('refuses a discount that is $name', ({ unitAmount, discountAmount }) => {
    const line = { quantity: '1', unitAmount, discountPercentage: '0', discountAmount, taxRate: null };
    expect(() => computeLine(line)).toThrow(InvoiceArithmeticError);
  });

  it('refuses line amounts and totals beyond the int64 range JavaScript keeps exact', () => {
    const huge = {
      quantity: '999999999',
      unitAmount: '99999999',
      discountPercentage: '0',
      discountAmount: '0',
    };
    expect(() => computeLine({ ...huge, taxRate: null })).toThrow(/largest supported amount/);
    const big = { amount: Number.MAX_SAFE_INTEGER, taxAmount: 0 };
    expect(() => invoiceTotals([big, { amount: 1, taxAmount: 0 }])).toThrow(/largest supported amount/);
  });
});

describe('the golden cases through POST /invoices', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment();
    customerId = await f.createCustomer(env);
    const rates = new Set(GOLDEN.flatMap((golden) => (golden.taxRate === null ? [] : [golden.taxRate])));
    for (const rate of rates) await f.createTaxCode(env, `R${rate}`, String(rate));
  });

  it.each(GOLDEN)('$name', async (golden) => {
    const invoice = await f.createInvoice(env, {
      customerId,
      currency: golden.currency,
      items: [
        {
          quantity: golden.quantity,
          unitAmount: golden.unitAmount,
          title: golden.name,
          taxCode: golden.taxRate === null ? null : `R${golden.taxRate}`,
          discount: golden.discount ?? null,
        },
      ],
    });

    expect(invoice.items[0]).toMatchObject({
      quantity: golden.quantity,
      unitAmount: golden.unitAmount,
      amount: golden.amount,
      taxAmount: golden.taxAmount,
      discount: { percentage: golden.discount?.percentage ?? 0, amount: golden.discount?.amount ?? 0 },
    });
    expect(invoice).toMatchObject({
      currency: golden.currency,
      totalExclVat: golden.amount,
      totalVat: golden.taxAmount,
      totalInclVat: golden.amount + golden.taxAmount,
      totalDue: golden.amount + golden.taxAmount,
    });
  });
});

/** A second implementation of DESIGN §5 on scaled BigInts, as an oracle independent of decimal.js. */
function oracleLine(q: bigint, u: bigint, p: bigint, a: bigint, r: bigint | null) {
  // quantity = q/10^3, unitAmount = u/10^4, percentage = p/10^2, discount amount = a/10^2, rate = r/10^4
  const roundDiv = (n: bigint, d: bigint) => {
    const magnitude = (2n * (n < 0n ? -n : n) + d) / (2n * d);
    return n < 0n ? -magnitude : magnitude;
  };
  const net = q * u * 10_000n - q * u * p - a * 1_000_000_000n; // over 10^11
  const amount = roundDiv(net, 100_000_000_000n);
  const taxAmount = r === null ? 0n : roundDiv(amount * r, 1_000_000n);
  return { amount: Number(amount), taxAmount: Number(taxAmount) };
}

describe('an invoice of 500 lines', () => {
  it('has totals equal to the sums of its lines, each line as an independent computation has it', async () => {
    // given 500 lines of varied signs, fractions and discounts (a fixed pseudo-random sequence), in an
    // environment that rounds VAT per line: the oracle computes each line on its own (test/tax covers
    // the default, per rate group over the invoice)
    const env = await t.createEnvironment();
    await t.sql(`update environment set tax_rounding = 'line' where id = $1`, [env.id]);
    const customerId = await f.createCustomer(env);
    const rates = [null, 250_000n, 75_000n, 6n] as const; // 25 %, 7.5 %, 0.0006 %
    for (const rate of rates)
      if (rate !== null) await f.createTaxCode(env, `R${rate}`, String(Number(rate) / 1e4));
    let seed = 42;
    const next = (limit: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % limit;
    };
    const lines = Array.from({ length: 500 }, (_, index) => {
      const sign = index % 7 === 3 ? -1n : 1n;
      const q = BigInt(1 + next(50_000));
      const u = sign * BigInt(next(2_000_000));
      const p = BigInt(next(5_000));
      const grossCents = (q * (u < 0n ? -u : u)) / 100_000n; // |gross| in hundredths of a minor unit, rounded down
      const a = sign * BigInt(next(Number(grossCents / 2n) + 1));
      const r = rates[index % rates.length] ?? null;
      return { q, u, p, a, r };
    });

    // when
    const invoice = await f.createInvoice(env, {
      customerId,
      items: lines.map(({ q, u, p, a, r }, index) => ({
        quantity: Number(q) / 1e3,
        unitAmount: Number(u) / 1e4,
        title: `Line ${index}`,
        taxCode: r === null ? null : `R${r}`,
        discount: { percentage: Number(p) / 1e2, amount: Number(a) / 1e2 },
      })),
    });

    // then
    const expected = lines.map(({ q, u, p, a, r }) => oracleLine(q, u, p, a, r));
    expect(invoice.items.map((item: any) => ({ amount: item.amount, taxAmount: item.taxAmount }))).toEqual(
      expected,
    );
    const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
    const totalExclVat = sum(expected.map((line) => line.amount));
    const totalVat = sum(expected.map((line) => line.taxAmount));
    expect(invoice).toMatchObject({ totalExclVat, totalVat, totalInclVat: totalExclVat + totalVat });
    const [stored] = await t.sql<{ excl: string; vat: string }>(
      'select sum(amount) as excl, sum(tax_amount) as vat from invoice_item where invoice_id = $1',
      [invoice.id],
    );
    expect([Number(stored?.excl), Number(stored?.vat)]).toEqual([totalExclVat, totalVat]);
    expect((await t.rest('GET', `/invoices/${invoice.id}`, { env })).body).toEqual(invoice);
  });
});
