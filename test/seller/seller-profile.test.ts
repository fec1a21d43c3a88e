import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_LOGO_BYTES } from '../../src/modules/seller/seller.checks.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { PNG_1X1 } from './fixtures.ts';

const t = setupTestApp();

const FIELDS = `legalName address { street1 street2 postalCode city country } vatId taxNumber companyId
  email phone iban bic paymentInstructions footer language logo { mediaType byteSize data } updatedAt`;
const UPDATE = `mutation ($input: SellerProfileUpdateInput!) {
  sellerProfileUpdate(input: $input) { sellerProfile { ${FIELDS} } userErrors { field message code } } }`;
const READ = `{ sellerProfile { ${FIELDS} } }`;

async function gql(env: TestEnvironment, query: string, variables?: Record<string, unknown>) {
  const response = await t.graphql(query, variables, { env });
  expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
  return response.body.data as any;
}

describe('seller profile', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment('Profile Co');
  });

  it('is empty until set, then keeps every field, normalized', async () => {
    // given a new environment
    expect((await gql(env, READ)).sellerProfile).toMatchObject({
      legalName: null,
      language: 'en',
      logo: null,
    });

    // when the profile is set
    const { sellerProfileUpdate } = await gql(env, UPDATE, {
      input: {
        legalName: 'Nordlicht Software GmbH',
        address: { street1: 'Hafenstraße 1', postalCode: '20457', city: 'Hamburg', country: 'de' },
        vatId: 'de 123.456.789',
        taxNumber: '22/815/08150',
        companyId: 'HRB 123456, Amtsgericht Hamburg',
        email: 'billing@nordlicht.example',
        phone: '+49 40 1234567',
        iban: 'de89 3704 0044 0532 0130 00',
        bic: 'cobadeffxxx',
        paymentInstructions: 'Please quote the invoice number.',
        footer: 'Managing director: Jane Doe',
        language: 'de',
        logo: PNG_1X1,
      },
    });

    // then
    expect(sellerProfileUpdate.userErrors).toEqual([]);
    const expected = {
      legalName: 'Nordlicht Software GmbH',
      address: {
        street1: 'Hafenstraße 1',
        street2: null,
        postalCode: '20457',
        city: 'Hamburg',
        country: 'DE',
      },
      vatId: 'DE123456789',
      taxNumber: '22/815/08150',
      companyId: 'HRB 123456, Amtsgericht Hamburg',
      email: 'billing@nordlicht.example',
      phone: '+49 40 1234567',
      iban: 'DE89370400440532013000',
      bic: 'COBADEFFXXX',
      paymentInstructions: 'Please quote the invoice number.',
      footer: 'Managing director: Jane Doe',
      language: 'de',
      logo: { mediaType: 'image/png', byteSize: 70, data: PNG_1X1 },
    };
    expect(sellerProfileUpdate.sellerProfile).toMatchObject(expected);
    expect((await gql(env, READ)).sellerProfile).toMatchObject(expected);

    // and a partial update leaves the rest, null clears a field and the logo
    const { sellerProfileUpdate: cleared } = await gql(env, UPDATE, { input: { phone: null, logo: null } });
    expect(cleared.sellerProfile).toMatchObject({ ...expected, phone: null, logo: null });
  });

  it.each([
    ['iban', 'DE89 3704 0044 0532 0130 01', 'has wrong check digits: it is not a valid IBAN'],
    ['iban', 'hello', 'is not an IBAN: a country code, 2 check digits and up to 30 letters or digits'],
    ['bic', 'COBA', 'is not a BIC: 8 or 11 letters and digits (ISO 9362)'],
    ['vatId', 'DE12345', 'is not in the format of a DE VAT number'],
    ['email', 'not-an-address', 'Invalid email address'],
    ['logo', Buffer.from('GIF89a-not-an-accepted-image').toString('base64'), 'must be a PNG or JPEG image'],
    ['logo', 'not base64!', 'is not base64'],
    [
      'logo',
      Buffer.concat([Buffer.from(PNG_1X1, 'base64'), Buffer.alloc(MAX_LOGO_BYTES)]).toString('base64'),
      'is larger than 256 KiB',
    ],
    [
      'logo',
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]).toString('base64'),
      'is not a readable PNG image',
    ],
  ])('refuses %s %#: a coded user error on the field, nothing changed', async (field, value, message) => {
    // given a profile with a footer
    const fresh = await t.createEnvironment('Refusals');
    await gql(fresh, UPDATE, { input: { footer: 'kept' } });

    // when
    const { sellerProfileUpdate } = await gql(fresh, UPDATE, {
      input: { [field]: value, footer: 'changed' },
    });

    // then
    expect(sellerProfileUpdate.sellerProfile).toBeNull();
    expect(sellerProfileUpdate.userErrors).toEqual([
      { field: ['input', field], message: expect.stringContaining(message), code: 'INVALID_INPUT' },
    ]);
    expect((await gql(fresh, READ)).sellerProfile.footer).toBe('kept');
  });

  it('refuses an address whose country is not an ISO code', async () => {
    const { sellerProfileUpdate } = await gql(env, UPDATE, { input: { address: { country: 'Germany' } } });
    expect(sellerProfileUpdate.userErrors).toEqual([
      {
        field: ['input', 'address', 'country'],
        message: 'must be a two-letter ISO 3166 country code such as DE or FR',
        code: 'INVALID_INPUT',
      },
    ]);
  });

  it('two first updates at once both apply, to one row', async () => {
    const fresh = await t.createEnvironment('Concurrent');
    const results = await Promise.all([
      gql(fresh, UPDATE, { input: { legalName: 'A GmbH' } }),
      gql(fresh, UPDATE, { input: { footer: 'B' } }),
    ]);
    expect(results.map((r) => r.sellerProfileUpdate.userErrors)).toEqual([[], []]);
    expect((await gql(fresh, READ)).sellerProfile).toMatchObject({ legalName: 'A GmbH', footer: 'B' });
    const rows = await t.sql('select count(*)::int as n from seller_profile where environment_id = $1', [
      fresh.id,
    ]);
    expect(rows).toEqual([{ n: 1 }]);
  });
});
