import { builder } from '../../graphql/builder.ts';
import { TAX_ID_TYPES, type TaxId } from './tax-id.ts';
import { TAX_BEHAVIORS, TAX_CATEGORIES, TAX_EXEMPTIONS } from './tax-policy.ts';

export const TaxBehaviorEnum = builder.enumType('TaxBehavior', {
  values: TAX_BEHAVIORS,
  description:
    'exclusive: amounts are net and tax comes on top; inclusive: amounts are the gross the buyer pays, ' +
    'and the net is derived per rate group (docs/tax.md).',
});

export const TaxExemptEnum = builder.enumType('TaxExempt', {
  values: TAX_EXEMPTIONS,
  description:
    'none: taxed as the lines say; exempt and reverse_charge: every taxable line at 0 % with the note ' +
    'the law requires. reverse_charge needs an eu_vat tax id.',
});

export const TaxCategoryEnum = builder.enumType('TaxCategory', {
  values: TAX_CATEGORIES,
  description:
    'EN 16931 VAT category: S standard rate, Z zero rated, E exempt, AE reverse charge, O not subject to VAT.',
});

export const TaxIdTypeEnum = builder.enumType('TaxIdType', {
  values: TAX_ID_TYPES,
});

export const TaxIdRef = builder.objectRef<TaxId>('TaxId').implement({
  fields: (t) => ({
    type: t.expose('type', { type: TaxIdTypeEnum }),
    value: t.exposeString('value', { description: 'Upper case, without spaces, dots or hyphens.' }),
  }),
});

export const TaxIdInputRef = builder.inputType('TaxIdInput', {
  fields: (t) => ({
    type: t.field({ type: TaxIdTypeEnum, required: true }),
    value: t.string({
      required: true,
      description: 'eu_vat: the two-letter country prefix and the number (EL for Greece), e.g. DE123456789.',
    }),
  }),
});
