/**
 * The tax vocabulary several modules share (docs/tax.md): how a line's amount relates to its tax,
 * and how a customer's tax identity changes the tax its invoices carry.
 */

/** exclusive: the line's amount is net, tax comes on top; inclusive: it is the gross the buyer saw. */
export const TAX_BEHAVIORS = ['exclusive', 'inclusive'] as const;
export type TaxBehavior = (typeof TAX_BEHAVIORS)[number];

/** none: taxed as the lines' codes say; exempt and reverse_charge: every taxable line at 0 %. */
export const TAX_EXEMPTIONS = ['none', 'exempt', 'reverse_charge'] as const;
export type TaxExempt = (typeof TAX_EXEMPTIONS)[number];

/** The wording an invoice must carry when it charges no VAT because of who the customer is. */
export const TAX_NOTES: Record<Exclude<TaxExempt, 'none'>, string> = {
  exempt: 'Exempt from VAT',
  reverse_charge:
    'Reverse charge: VAT to be accounted for by the recipient (Article 196, Council Directive 2006/112/EC)',
};

export const taxNoteOf = (exempt: TaxExempt): string | null => (exempt === 'none' ? null : TAX_NOTES[exempt]);

/**
 * EN 16931 VAT category codes (UNCL5305) a breakdown row can have: S standard rate, Z zero rated,
 * E exempt, AE reverse charge, O not subject to VAT (a line without a tax code).
 */
export const TAX_CATEGORIES = ['S', 'Z', 'E', 'AE', 'O'] as const;
export type TaxCategory = (typeof TAX_CATEGORIES)[number];

/** Category, exemption reason code (CEF VATEX list) and reason text of a group of lines. */
export function taxCategoryOf(
  taxRate: string | null,
  exempt: TaxExempt,
): { category: TaxCategory; exemptionReasonCode: string | null; exemptionReason: string | null } {
  if (taxRate === null) {
    return { category: 'O', exemptionReasonCode: 'VATEX-EU-O', exemptionReason: 'Not subject to VAT' };
  }
  if (exempt === 'reverse_charge') {
    return { category: 'AE', exemptionReasonCode: 'VATEX-EU-AE', exemptionReason: TAX_NOTES.reverse_charge };
  }
  // The VATEX code of an exemption names the article the customer is exempt under, which the service
  // does not know; EN 16931 accepts the reason as text alone (BR-E-10).
  if (exempt === 'exempt')
    return { category: 'E', exemptionReasonCode: null, exemptionReason: TAX_NOTES.exempt };
  return { category: Number(taxRate) === 0 ? 'Z' : 'S', exemptionReasonCode: null, exemptionReason: null };
}
