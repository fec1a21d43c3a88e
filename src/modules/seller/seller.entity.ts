import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../../db/tenant-keys.ts';
import type { BillingAddress } from '../customer/customer.entity.ts';

/** The languages an invoice document can be printed in (labels; dates and money go through Intl). */
export const SELLER_LANGUAGES = ['en', 'de', 'fr'] as const;
export type SellerLanguage = (typeof SELLER_LANGUAGES)[number];

export const LOGO_MEDIA_TYPES = ['image/png', 'image/jpeg'] as const;
export type LogoMediaType = (typeof LOGO_MEDIA_TYPES)[number];

/**
 * The business an environment invoices as: what EU VAT law (directive 2006/112/EC art. 226) and
 * EN 16931 require an invoice to name about its issuer, and how it wants to be paid.
 */
export const SellerProfileSchema = defineEntity({
  name: 'SellerProfile',
  tableName: 'seller_profile',
  properties: {
    ...tenantKeys(),
    legalName: p.string().length(250).nullable(),
    address: p.json<BillingAddress>().nullable(),
    vatId: p.string().length(40).nullable(),
    taxNumber: p.string().length(40).nullable(),
    companyId: p.string().length(100).nullable(),
    email: p.string().length(320).nullable(),
    phone: p.string().length(40).nullable(),
    iban: p.string().length(34).nullable(),
    bic: p.string().length(11).nullable(),
    paymentInstructions: p.string().length(1000).nullable(),
    footer: p.string().length(1000).nullable(),
    language: p.enum(SELLER_LANGUAGES).default('en'),
    /** The current logo (a row of seller_logo); booked invoices keep naming the one they were booked with. */
    logoId: p.uuid().nullable(),
    updatedAt: p.datetime().nullable(),
  },
});

export type SellerProfile = InferEntity<typeof SellerProfileSchema>;

/** A logo as uploaded: never changed or deleted, so an invoice booked with it prints it for good. */
export const SellerLogoSchema = defineEntity({
  name: 'SellerLogo',
  tableName: 'seller_logo',
  properties: {
    ...tenantKeys(),
    mediaType: p.enum(LOGO_MEDIA_TYPES),
    /** The image's bytes, base64-encoded. */
    data: p.text(),
    byteSize: p.integer(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export type SellerLogo = InferEntity<typeof SellerLogoSchema>;

/** The seller as an invoice names it: the live profile while a draft, frozen onto the invoice when booked. */
export type InvoiceSeller = {
  /** The legal name; the environment's name while the profile has none. */
  legalName: string;
  address: BillingAddress | null;
  vatId: string | null;
  taxNumber: string | null;
  companyId: string | null;
  email: string | null;
  phone: string | null;
  iban: string | null;
  bic: string | null;
  paymentInstructions: string | null;
  footer: string | null;
  language: SellerLanguage;
  logoId: string | null;
};
