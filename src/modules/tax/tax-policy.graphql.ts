import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { TAX_ID_TYPES, type TaxId } from './tax-id.ts';
import { TAX_BEHAVIORS, TAX_CATEGORIES, TAX_EXEMPTIONS } from './tax-policy.ts';

export const TaxBehaviorEnum = builder.enumType('TaxBehavior', {
  values: describedValues(TAX_BEHAVIORS, {
    exclusive: 'Amounts are net: tax is added on top.',
    inclusive: 'Amounts include tax: the net is computed from them.',
  }),
  description:
    'exclusive: amounts are net and tax comes on top; inclusive: amounts are the gross the buyer pays, ' +
    'and the net is derived per rate group (docs/tax.md).',
});

export const TaxExemptEnum = builder.enumType('TaxExempt', {
  values: describedValues(TAX_EXEMPTIONS, {
    none: 'Taxed as usual.',
    exempt: 'Exempt from tax.',
    reverse_charge: 'The customer accounts for the tax (reverse charge); invoices carry none.',
  }),
  description:
    'none: taxed as the lines say; exempt and reverse_charge: every taxable line at 0 % with the note ' +
    'the law requires. reverse_charge needs an eu_vat tax id.',
});

export const TaxCategoryEnum = builder.enumType('TaxCategory', {
  values: describedValues(TAX_CATEGORIES, {
    S: 'Standard rate.',
    Z: 'Zero rated.',
    E: 'Exempt from tax.',
    AE: 'Reverse charge.',
    O: 'Outside the scope of tax.',
  }),
  description:
    'EN 16931 VAT category: S standard rate, Z zero rated, E exempt, AE reverse charge, O not subject to VAT.',
});

export const TaxIdTypeEnum = builder.enumType('TaxIdType', {
  description: 'The kind of a tax id.',
  values: describedValues(TAX_ID_TYPES, {
    eu_vat: 'A VAT identification number of an EU member state.',
    gb_vat: 'A United Kingdom VAT registration number.',
  }),
});

export const TaxIdRef = builder.objectRef<TaxId>('TaxId').implement({
  description: 'A tax id of a customer (e.g. a VAT number).',
  fields: (t) => ({
    type: t.expose('type', { type: TaxIdTypeEnum, description: 'The kind of tax id.' }),
    value: t.exposeString('value', { description: 'Upper case, without spaces, dots or hyphens.' }),
  }),
});

export const TaxIdInputRef = builder.inputType('TaxIdInput', {
  description: 'A tax id of a customer.',
  fields: (t) => ({
    type: t.field({ type: TaxIdTypeEnum, required: true, description: 'The kind of tax id.' }),
    value: t.string({
      required: true,
      description: 'eu_vat: the two-letter country prefix and the number (EL for Greece), e.g. DE123456789.',
    }),
  }),
});
