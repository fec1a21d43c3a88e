import { z } from 'zod';

/** ISO 4217 codes this runtime knows; the contract's "supported currencies". */
export const SUPPORTED_CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

/** Digits after the decimal point of the currency's minor unit: 2 for EUR, 0 for JPY, 3 for KWD. */
export function minorUnitDigits(currency: string): number {
  return (
    new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
  );
}

/** An uppercase currency code; input is accepted in either case. */
export const CurrencyCode = z
  .string()
  .trim()
  .transform((code) => code.toUpperCase())
  .refine((code) => SUPPORTED_CURRENCIES.has(code), {
    error: (issue) => `${String(issue.input)} is not a supported ISO 4217 currency code`,
  });
