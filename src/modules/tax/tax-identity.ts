import { DomainError, type FieldIssue } from '../../errors.ts';
import { normalizeTaxId, type TaxId, taxIdProblem } from './tax-id.ts';
import type { TaxExempt } from './tax-policy.ts';

type TaxIdentity = { taxIds: TaxId[]; taxExempt: TaxExempt };

/**
 * A customer's tax ids and exemption after a change: ids normalised and checked for format, each
 * refusal naming its field. An absent field keeps `current`'s value, null clears it. Reverse charge
 * shifts the VAT to a business customer, whose VAT number the invoice must then show (Article 226
 * of Directive 2006/112/EC): it needs a VAT id.
 */
export function customerTaxIdentity(
  current: TaxIdentity,
  change: { taxIds?: { type: TaxId['type']; value: string }[] | null; taxExempt?: TaxExempt | null },
): TaxIdentity {
  const taxIds =
    change.taxIds === undefined
      ? current.taxIds
      : (change.taxIds ?? []).map((id) => ({ type: id.type, value: normalizeTaxId(id.value) }));
  const taxExempt = change.taxExempt === undefined ? current.taxExempt : (change.taxExempt ?? 'none');
  const issues: FieldIssue[] = [];
  taxIds.forEach((id, index) => {
    const problem = change.taxIds === undefined ? undefined : taxIdProblem(id.type, id.value);
    if (problem) issues.push({ path: ['taxIds', index, 'value'], message: problem });
    else if (taxIds.findIndex((other) => other.type === id.type && other.value === id.value) < index)
      issues.push({ path: ['taxIds', index, 'value'], message: 'is already among the tax ids' });
  });
  if (issues.length > 0) throw DomainError.invalidInput(issues);
  if (taxExempt === 'reverse_charge' && !taxIds.some((id) => id.type === 'eu_vat')) {
    throw DomainError.onField(
      'INVALID_INPUT',
      ['taxExempt'],
      'reverse charge needs the customer’s EU VAT number: add an eu_vat tax id',
    );
  }
  return { taxIds, taxExempt };
}
