import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import { BillingAddressInputRef, BillingAddressRef } from '../customer/customer.graphql.ts';
import { MAX_LOGO_BYTES } from './seller.checks.ts';
import { SELLER_LANGUAGES, type SellerLogo, type SellerProfile } from './seller.entity.ts';
import { SellerProfileService } from './seller.service.ts';

const SellerLanguageEnum = builder.enumType('SellerLanguage', {
  values: describedValues(SELLER_LANGUAGES, {
    en: 'English.',
    de: 'German.',
    fr: 'French.',
  }),
  description: 'The language invoice documents are printed in.',
});

const SellerLogoRef = builder.objectRef<SellerLogo>('SellerLogo').implement({
  description: 'The logo printed at the top of invoice documents.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    mediaType: t.exposeString('mediaType', { description: 'image/png or image/jpeg.' }),
    byteSize: t.exposeInt('byteSize', { description: 'The logo file’s size, in bytes.' }),
    data: t.exposeString('data', { description: 'The image, base64-encoded.' }),
  }),
});

const SellerProfileRef = builder.objectRef<SellerProfile>('SellerProfile').implement({
  description:
    'The business this environment invoices as: printed on every invoice and credit note and written into ' +
    'its e-invoices. Drafts show the profile as it is; booking freezes it onto the invoice.',
  fields: (t) => ({
    legalName: t.exposeString('legalName', {
      nullable: true,
      description: 'The registered name; invoices show the environment’s name while it is null.',
    }),
    address: t.expose('address', {
      type: BillingAddressRef,
      nullable: true,
      description: 'The seller’s postal address, printed on invoices; null when not set.',
    }),
    vatId: t.exposeString('vatId', { nullable: true, description: 'VAT identification number (BT-31).' }),
    taxNumber: t.exposeString('taxNumber', {
      nullable: true,
      description: 'Another tax registration, such as a German Steuernummer (BT-32).',
    }),
    companyId: t.exposeString('companyId', {
      nullable: true,
      description: 'Legal registration, such as a commercial register entry or SIREN (BT-30).',
    }),
    email: t.exposeString('email', {
      nullable: true,
      description: 'Contact e-mail address printed on invoices; null when not set.',
    }),
    phone: t.exposeString('phone', {
      nullable: true,
      description: 'Contact phone number printed on invoices; null when not set.',
    }),
    iban: t.exposeString('iban', {
      nullable: true,
      description: 'Bank account (IBAN) printed for payment; null when not set.',
    }),
    bic: t.exposeString('bic', {
      nullable: true,
      description: 'Bank code (BIC) printed for payment; null when not set.',
    }),
    paymentInstructions: t.exposeString('paymentInstructions', {
      nullable: true,
      description: 'Payment instructions printed on invoices; null when not set.',
    }),
    footer: t.exposeString('footer', { nullable: true, description: 'Printed at the bottom of each page.' }),
    language: t.expose('language', {
      type: SellerLanguageEnum,
      description: 'The language invoices are printed in.',
    }),
    logo: t.field({
      description: 'The logo printed on invoices; null when none.',
      type: SellerLogoRef,
      nullable: true,
      resolve: (profile, _args, ctx) =>
        profile.logoId ? new SellerProfileService(ctx).logo(profile.logoId) : null,
    }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it last changed (ISO 8601, UTC); null if it never changed.',
    }),
  }),
});

const SellerProfileUpdateInputRef = builder.inputType('SellerProfileUpdateInput', {
  description: 'Fields left out stay as they are; null clears one.',
  fields: (t) => ({
    legalName: t.string({ description: 'A new legal name.' }),
    address: t.field({
      type: BillingAddressInputRef,
      description: 'Replaces the whole address; country is a two-letter ISO 3166 code.',
    }),
    vatId: t.string({ description: 'An EU VAT number with its country prefix (or a GB one).' }),
    taxNumber: t.string({ description: 'A new tax number; null clears it.' }),
    companyId: t.string({ description: 'A new company registration id; null clears it.' }),
    email: t.string({ description: 'A new contact e-mail address; null clears it.' }),
    phone: t.string({ description: 'A new contact phone number; null clears it.' }),
    iban: t.string({ description: 'Checked by its ISO 13616 check digits; spaces are dropped.' }),
    bic: t.string({ description: 'A new bank code (BIC); null clears it.' }),
    paymentInstructions: t.string({ description: 'New payment instructions; null clears it.' }),
    footer: t.string({ description: 'A new invoice footer text; null clears it.' }),
    language: t.field({ type: SellerLanguageEnum, description: 'A new invoice language.' }),
    logo: t.string({
      description: `A PNG or JPEG image of at most ${MAX_LOGO_BYTES / 1024} KiB, base64-encoded; null removes it.`,
    }),
  }),
});

const SellerProfileUpdatePayload = payloadType(
  'SellerProfileUpdatePayload',
  'sellerProfile',
  SellerProfileRef,
);

builder.queryFields((t) => ({
  sellerProfile: t.field({
    type: SellerProfileRef,
    description: 'The business this environment invoices as (empty until set).',
    resolve: (_root, _args, ctx) => new SellerProfileService(ctx).get(),
  }),
}));

builder.mutationFields((t) => ({
  sellerProfileUpdate: t.field({
    type: SellerProfileUpdatePayload,
    description:
      'Changes the seller profile. Invoices booked before keep the profile they were booked with; drafts show the new one.',
    args: {
      input: t.arg({
        type: SellerProfileUpdateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('sellerProfile', () => new SellerProfileService(ctx).update(input)),
  }),
}));
