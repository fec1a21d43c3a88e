import { describe, expect, it } from 'vitest';
import { minorUnitDigits } from '../../src/money/currency.ts';
import { Decimal, roundHalfAwayFromZero } from '../../src/money/decimal.ts';

describe('Decimal: the one configuration money is computed with', () => {
  it('keeps products and sums of the largest accepted inputs exact', () => {
    // A 15-digit quantity × a 12-decimal unit amount × a 4-decimal percentage / 100 (checked with Python's decimal).
    const product = new Decimal('123456789.012345')
      .times('9007199254740.991000000001')
      .times('99.9999')
      .dividedBy(100);
    expect(product.toFixed()).toBe('1111998785984811665628.026319675131660555987655');
  });

  it('is not the binary floating point of a JS number', () => {
    expect(new Decimal('0.1').plus('0.2').toFixed()).toBe('0.3');
    expect(new Decimal('1.005').times(100).toFixed()).toBe('100.5');
  });
});

describe('roundHalfAwayFromZero: to a whole minor unit, ties away from zero', () => {
  it.each([
    ['2.5', '3'],
    ['-2.5', '-3'],
    ['3.5', '4'],
    ['-3.5', '-4'],
    ['2.4999999', '2'],
    ['-2.4999999', '-2'],
    ['0.5', '1'],
    ['-0.5', '-1'],
    ['0', '0'],
    ['1234567890123.5', '1234567890124'],
  ])('%s rounds to %s', (value, rounded) => {
    expect(roundHalfAwayFromZero(value).toFixed()).toBe(rounded);
  });
});

describe('minorUnitDigits: the exponent of the currency minor unit (ISO 4217 through Intl)', () => {
  it.each([
    ['EUR', 2],
    ['USD', 2],
    ['JPY', 0],
    ['KRW', 0],
    ['KWD', 3],
    ['BHD', 3],
  ])('%s has %s', (currency, digits) => {
    expect(minorUnitDigits(currency)).toBe(digits);
  });
});
