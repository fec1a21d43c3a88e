import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TaxRounding } from '../../src/auth/environment.entity.ts';
import { computeTaxedLines, type TaxLineInput, taxBreakdown } from '../../src/modules/invoice/invoice.tax.ts';
import { Decimal, roundHalfAwayFromZero } from '../../src/money/decimal.ts';

/** Fixed, so a failure reproduces exactly on every machine. */
const RUN = { seed: 20261123, numRuns: 200 } as const;

const line = (
  unitAmount: string,
  taxRate: string | null,
  more: Partial<TaxLineInput> = {},
): TaxLineInput => ({
  quantity: '1',
  unitAmount,
  discountPercentage: '0',
  discountAmount: '0',
  taxRate,
  taxCode: taxRate === null ? null : `VAT${taxRate}`,
  taxBehavior: 'exclusive',
  ...more,
});

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

describe('tax rounding', () => {
  it('500 lines of €0.10 at 7.5 %: €3.75 VAT per document, €5.00 per line', () => {
    // given 500 lines of 10 cents at 7.5 %: each line's exact VAT is 0.75 cents
    const lines = Array.from({ length: 500 }, () => line('10', '7.5'));

    // when taxed under each rounding
    const document = computeTaxedLines(lines, 'document');
    const perLine = computeTaxedLines(lines, 'line');

    // then the document rounds €50.00 × 7.5 % = 375 cents once and spreads it, 1 cent to 375 of the lines
    expect(sum(document.map((l) => l.taxAmount))).toBe(375);
    expect(document.filter((l) => l.taxAmount === 1)).toHaveLength(375);
    expect(document.filter((l) => l.taxAmount === 0)).toHaveLength(125);
    // ties go to the earlier lines: the first 375 carry the cent
    expect(document.slice(0, 375).every((l) => l.taxAmount === 1)).toBe(true);
    // and per line each 0.75 rounds to 1: 500 cents
    expect(sum(perLine.map((l) => l.taxAmount))).toBe(500);
    expect(sum(document.map((l) => l.amount))).toBe(5000);
  });

  it('inclusive €9.99 at 19 %: net €8.39, VAT €1.60, under both roundings', () => {
    for (const rounding of ['document', 'line'] as const) {
      const [taxed] = computeTaxedLines([line('999', '19', { taxBehavior: 'inclusive' })], rounding);
      // 999 × 19 / 119 = 159.50…, rounded 160; 999 − 160 = 839
      expect(taxed).toEqual({ amount: 839, taxAmount: 160 });
    }
  });

  it('a mixed-rate invoice matches the hand computation per rate', () => {
    // given 19 % lines of 1000.5 → 1001 (rounded) and 333, a 7 % line of 1999 (2 × 999.5), an untaxed
    // fee of 250, and an inclusive 19 % line of 1190
    const lines = [
      line('1000.5', '19'),
      line('333', '19'),
      line('999.5', '7', { quantity: '2' }),
      line('250', null),
      line('1190', '19', { taxBehavior: 'inclusive' }),
    ];

    const taxed = computeTaxedLines(lines, 'document');
    const rows = taxBreakdown(
      lines.map((input, index) => ({ ...input, ...(taxed[index] as { amount: number; taxAmount: number }) })),
      'none',
    );

    // then, by hand: 19 % exclusive: (1001 + 333) × 0.19 = 253.46 → 253, spread 190.19 → 190, 63.27 → 63;
    // 7 %: 1999 × 0.07 = 139.93 → 140; inclusive 19 %: 1190 × 19 / 119 = 190, net 1000; untaxed: 250, 0
    expect(taxed).toEqual([
      { amount: 1001, taxAmount: 190 },
      { amount: 333, taxAmount: 63 },
      { amount: 1999, taxAmount: 140 },
      { amount: 250, taxAmount: 0 },
      { amount: 1000, taxAmount: 190 },
    ]);
    expect(rows).toEqual([
      expect.objectContaining({ taxRate: '7', taxableAmount: 1999, taxAmount: 140, category: 'S' }),
      expect.objectContaining({
        taxRate: '19',
        taxBehavior: 'exclusive',
        taxableAmount: 1334,
        taxAmount: 253,
        category: 'S',
      }),
      expect.objectContaining({
        taxRate: '19',
        taxBehavior: 'inclusive',
        taxableAmount: 1000,
        taxAmount: 190,
        category: 'S',
      }),
      expect.objectContaining({
        taxRate: null,
        taxCode: null,
        taxableAmount: 250,
        taxAmount: 0,
        category: 'O',
        exemptionReasonCode: 'VATEX-EU-O',
      }),
    ]);
  });

  it('keeps credit-note signs: negative lines allocate as the mirror of positive ones', () => {
    const positive = computeTaxedLines([line('10', '7.5'), line('10', '7.5')], 'document');
    const negative = computeTaxedLines([line('-10', '7.5'), line('-10', '7.5')], 'document');
    expect(negative).toEqual(positive.map((l) => ({ amount: -l.amount, taxAmount: -l.taxAmount })));
  });

  it('labels reverse-charge and exempt groups with their category and reason', () => {
    const lines = [
      { taxCode: 'DE19', taxRate: '0', taxBehavior: 'exclusive' as const, amount: 100, taxAmount: 0 },
    ];
    expect(taxBreakdown(lines, 'reverse_charge')[0]).toMatchObject({
      category: 'AE',
      exemptionReasonCode: 'VATEX-EU-AE',
      exemptionReason: expect.stringContaining('Article 196'),
    });
    expect(taxBreakdown(lines, 'exempt')[0]).toMatchObject({
      category: 'E',
      exemptionReasonCode: null,
      exemptionReason: 'Exempt from VAT',
    });
    expect(taxBreakdown(lines, 'none')[0]).toMatchObject({ category: 'Z', exemptionReason: null });
  });
});

/** Random invoices: amounts of up to €10,000 with cent fractions, common EU rates, both behaviours. */
const randomLine = fc
  .record({
    quantity: fc.integer({ min: 1, max: 50 }).map(String),
    unitAmount: fc
      .integer({ min: -100_000, max: 1_000_000 })
      .map((hundredths) => new Decimal(hundredths).dividedBy(100).toFixed()),
    discountPercentage: fc.constant('0'),
    discountAmount: fc.constant('0'),
    taxRate: fc.constantFrom('19', '7', '7.5', '21', '5.5', '0', null),
    taxBehavior: fc.constantFrom('exclusive' as const, 'inclusive' as const),
  })
  .map((l) => ({ ...l, taxCode: l.taxRate === null ? null : `VAT${l.taxRate}` }));

describe('tax properties', () => {
  it.each(['document', 'line'] as TaxRounding[])(
    'under %s rounding, an inclusive line keeps net + tax = its gross and the breakdown adds up',
    (rounding) => {
      fc.assert(
        fc.property(fc.array(randomLine, { minLength: 1, maxLength: 40 }), (lines) => {
          const taxed = computeTaxedLines(lines, rounding);
          lines.forEach((input, index) => {
            const gross =
              roundHalfAwayFromZero(new Decimal(input.quantity).times(input.unitAmount)).toNumber() + 0;
            const { amount, taxAmount } = taxed[index] as { amount: number; taxAmount: number };
            if (input.taxBehavior === 'inclusive') expect(amount + taxAmount).toBe(gross);
            else expect(amount).toBe(gross);
            if (input.taxRate === null) expect(taxAmount).toBe(0);
          });
          const rows = taxBreakdown(
            lines.map((input, index) => ({
              ...input,
              ...(taxed[index] as { amount: number; taxAmount: number }),
            })),
            'none',
          );
          for (const row of rows) {
            if (row.taxRate === null) continue;
            const members = lines
              .map((input, index) => ({
                input,
                taxed: taxed[index] as { amount: number; taxAmount: number },
              }))
              .filter(({ input }) => input.taxRate === row.taxRate && input.taxBehavior === row.taxBehavior);
            const grossOrNet = Decimal.sum(
              0,
              ...members.map(({ input }) =>
                roundHalfAwayFromZero(new Decimal(input.quantity).times(input.unitAmount)),
              ),
            );
            const exact =
              row.taxBehavior === 'exclusive'
                ? grossOrNet.times(row.taxRate).dividedBy(100)
                : grossOrNet.times(row.taxRate).dividedBy(new Decimal(row.taxRate).plus(100));
            // Σ line taxes is the group's tax: rounded once under document, within a unit per line under line
            expect(row.taxAmount).toBe(sum(members.map((m) => m.taxed.taxAmount)));
            if (rounding === 'document')
              expect(row.taxAmount).toBe(roundHalfAwayFromZero(exact).toNumber() + 0);
            else expect(Math.abs(row.taxAmount - exact.toNumber())).toBeLessThanOrEqual(members.length / 2);
          }
        }),
        RUN,
      );
    },
  );
});
