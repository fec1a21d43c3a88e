import { z } from 'zod';

/** eu_vat: a VAT number of an EU member state (or XI, Northern Ireland); gb_vat: a UK one. */
export const TAX_ID_TYPES = ['eu_vat', 'gb_vat'] as const;
export type TaxIdType = (typeof TAX_ID_TYPES)[number];
export type TaxId = { type: TaxIdType; value: string };

/**
 * The format of each country's VAT number after its two-letter prefix, as the European Commission's
 * VIES describes them. A format check catches typing mistakes; whether the number is registered
 * only VIES can tell, and that is a network call this service does not make.
 */
const EU_VAT_FORMATS: Record<string, RegExp> = {
  AT: /^U\d{8}$/,
  BE: /^[01]\d{9}$/,
  BG: /^\d{9,10}$/,
  CY: /^\d{8}[A-Z]$/,
  CZ: /^\d{8,10}$/,
  DE: /^\d{9}$/,
  DK: /^\d{8}$/,
  EE: /^\d{9}$/,
  EL: /^\d{9}$/,
  ES: /^[A-Z0-9]\d{7}[A-Z0-9]$/,
  FI: /^\d{8}$/,
  FR: /^[A-HJ-NP-Z0-9]{2}\d{9}$/,
  HR: /^\d{11}$/,
  HU: /^\d{8}$/,
  IE: /^(\d{7}[A-W][A-IW]?|\d[A-Z+*]\d{5}[A-W])$/,
  IT: /^\d{11}$/,
  LT: /^(\d{9}|\d{12})$/,
  LU: /^\d{8}$/,
  LV: /^\d{11}$/,
  MT: /^\d{8}$/,
  NL: /^\d{9}B\d{2}$/,
  PL: /^\d{10}$/,
  PT: /^\d{9}$/,
  RO: /^[1-9]\d{1,9}$/,
  SE: /^\d{10}01$/,
  SI: /^\d{8}$/,
  SK: /^\d{10}$/,
  XI: /^(\d{9}|\d{12}|GD\d{3}|HA\d{3})$/,
};

const GB_VAT_FORMAT = /^GB(\d{9}|\d{12}|GD\d{3}|HA\d{3})$/;

/** Spaces, dots and hyphens people type into VAT numbers; the stored value is without them. */
export const normalizeTaxId = (value: string): string => value.replace(/[\s.-]/g, '').toUpperCase();

/** Why `value` is not a well-formed tax id of `type`, or undefined when it is. */
export function taxIdProblem(type: TaxIdType, value: string): string | undefined {
  if (type === 'gb_vat') {
    return GB_VAT_FORMAT.test(value)
      ? undefined
      : 'is not a UK VAT number: GB followed by 9 or 12 digits (or GD/HA and 3 digits)';
  }
  const country = value.slice(0, 2);
  const format = EU_VAT_FORMATS[country];
  if (!format) {
    return country === 'GR'
      ? 'Greek VAT numbers start with EL, not GR'
      : 'must start with the two-letter prefix of an EU member state (or XI)';
  }
  return format.test(value.slice(2)) ? undefined : `is not in the format of a ${country} VAT number`;
}

/** The shape of a tax id in input; its format is the service's to check, naming the field. */
export const TaxIdInput = z.strictObject({
  type: z.enum(TAX_ID_TYPES),
  value: z.string().trim().min(1).max(40),
});
