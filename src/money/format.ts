import { minorUnitDigits } from './currency.ts';
import { Decimal } from './decimal.ts';

/**
 * An amount of minor units as people read it, with its currency (`€1,234.50`): Intl gets an exact
 * decimal string of major units, so no binary floating point is on the way.
 */
export function formatMoney(minor: number | bigint, currency: string, locale = 'en'): string {
  const digits = minorUnitDigits(currency);
  const major = new Decimal(minor.toString()).dividedBy(new Decimal(10).pow(digits)).toFixed();
  return new Intl.NumberFormat(locale, {
    style: 'currency',
    currency,
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(major as Intl.StringNumericLiteral);
}
