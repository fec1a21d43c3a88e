import { z } from 'zod';
import { boundedText } from '../../validation.ts';
import { BillingAddressInput } from '../customer/customer.input.ts';
import { normalizeTaxId, taxIdProblem } from '../tax/tax-id.ts';
import { BIC_FORMAT, ibanProblem, normalizeIban } from './seller.checks.ts';
import { SELLER_LANGUAGES } from './seller.entity.ts';

const text = (max: number) => boundedText(1, max).nullish();

/** The seller's VAT number: an EU one (or XI) or a UK one, checked like a customer's. */
const VatId = z
  .string()
  .transform(normalizeTaxId)
  .superRefine((value, ctx) => {
    const problem = taxIdProblem(value.startsWith('GB') ? 'gb_vat' : 'eu_vat', value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const Iban = z
  .string()
  .transform(normalizeIban)
  .superRefine((value, ctx) => {
    const problem = ibanProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const Bic = z
  .string()
  .transform((value) => value.replace(/\s/g, '').toUpperCase())
  .refine((value) => BIC_FORMAT.test(value), 'is not a BIC: 8 or 11 letters and digits (ISO 9362)');

/** The seller's address: the customer address's fields, its country an ISO 3166 code (EN 16931 BT-40). */
const SellerAddress = BillingAddressInput.extend({
  country: z
    .string()
    .trim()
    .toUpperCase()
    .regex(/^[A-Z]{2}$/, 'must be a two-letter ISO 3166 country code such as DE or FR')
    .nullish(),
});

/** A partial update of the seller profile: an absent field stays as it is, `null` clears it. */
export const SellerProfileUpdateInput = z.strictObject({
  legalName: text(250),
  address: SellerAddress.nullish(),
  vatId: VatId.nullish(),
  taxNumber: text(40),
  companyId: text(100),
  email: z.email().max(320).nullish(),
  phone: z
    .string()
    .trim()
    .regex(/^\+?[0-9 ()/.-]{3,40}$/, 'must be a phone number: digits, spaces and + ( ) / . -')
    .nullish(),
  iban: Iban.nullish(),
  bic: Bic.nullish(),
  paymentInstructions: text(1000),
  footer: text(1000),
  language: z.enum(SELLER_LANGUAGES).optional(),
  /** A PNG or JPEG image, base64-encoded (a `data:` URL prefix is accepted); null removes the logo. */
  logo: z.string().max(400_000).nullish(),
});
export type SellerProfileUpdateInput = z.infer<typeof SellerProfileUpdateInput>;
