import { extractText, getDocumentProxy } from 'unpdf';
import { describe, expect, it } from 'vitest';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

const PROFILE = `mutation ($input: SellerProfileUpdateInput!) {
  sellerProfileUpdate(input: $input) { userErrors { field message } } }`;
const BOOK = `mutation ($id: UUID!) { invoiceBook(id: $id) { invoice { handle } userErrors { message } } }`;
const CUSTOMER = `mutation ($input: CustomerCreateInput!) {
  customerCreate(input: $input) { customer { id } userErrors { message } } }`;

/** The text lines of every page as pdf.js reads them back, with no-break spaces as plain spaces. */
async function pdfLines(env: TestEnvironment, id: string): Promise<string[]> {
  const response = await t.rest('GET', `/invoices/${id}`, { env, headers: { accept: 'application/pdf' } });
  expect(response.status).toBe(200);
  const pdf = await getDocumentProxy(new Uint8Array(response.body));
  return (await extractText(pdf, { mergePages: true })).text.replace(/[\u00a0\u202f]/g, ' ').split('\n');
}

/** A booked invoice at 19 % and 7 % for March, its seller printing in `language`. */
async function bookedIn(language: 'de' | 'fr', taxExempt: 'none' | 'reverse_charge' = 'none') {
  const env = await t.createEnvironment(`Language ${language}`);
  await f.createTaxCode(env, 'DE19', '19');
  await f.createTaxCode(env, 'DE7', '7');
  const { sellerProfileUpdate } = await f.gql(env, PROFILE, {
    input: {
      legalName: 'Nordlicht Software GmbH',
      address: { street1: 'Hafenstraße 1', postalCode: '20457', city: 'Hamburg', country: 'DE' },
      vatId: 'DE123456789',
      taxNumber: '22/815/08150',
      iban: 'DE89370400440532013000',
      language,
    },
  });
  expect(sellerProfileUpdate.userErrors).toEqual([]);
  const { customerCreate } = await f.gql(env, CUSTOMER, {
    input: {
      name: 'Marie Curie',
      handle: 'curie',
      companyName: 'Radium Analytique SAS',
      currency: 'EUR',
      paymentTerm: 'net30',
      billingAddress: { street1: '12 rue Curie', postalCode: '75005', city: 'Paris', country: 'FR' },
      taxIds: [{ type: 'eu_vat', value: 'FR40303265045' }],
      taxExempt,
    },
  });
  const invoice = await f.createInvoice(env, {
    customerId: customerCreate.customer.id,
    date: '2026-04-01',
    items: [
      {
        title: 'Hosting',
        quantity: 1,
        unitAmount: 100000,
        taxCode: 'DE19',
        periodStart: '2026-03-01',
        periodEnd: '2026-04-01',
      },
      { title: 'Handbuch', quantity: 2.5, unitAmount: 2000, taxCode: 'DE7', discount: { percentage: 12.5 } },
    ],
  });
  const { invoiceBook } = await f.gql(env, BOOK, { id: invoice.id });
  expect(invoiceBook.userErrors).toEqual([]);
  return { env, id: invoice.id as string, handle: invoiceBook.invoice.handle as string };
}

describe('the invoice PDF in the seller profile language', () => {
  it('prints German labels, dates and money', async () => {
    // given a booked invoice of a seller printing in German:
    // 1,000.00 × 19 % = 190.00; 2.5 × 20.00 − 12.5 % = 43.75 × 7 % = 3.06 (3.0625)
    const { env, id, handle } = await bookedIn('de');

    // when
    const lines = await pdfLines(env, id);

    // then
    expect(lines).toEqual(
      expect.arrayContaining([
        'Nordlicht Software GmbH Rechnung',
        'USt-IdNr. DE123456789 · Steuernr. 22/815/08150',
        `Rechnungsnummer ${handle}`,
        'Datum 01.04.2026',
        'Leistungszeitraum 01.03.2026 – 31.03.2026',
        'Fällig am 01.05.2026',
        'Währung EUR',
        'Rechnungsempfänger',
        'Kundennr. curie',
        'USt-IdNr. FR40303265045',
        '7 % 43,75 3,06',
        '19 % 1.000,00 190,00',
        'Summe netto 1.043,75 €',
        'USt. 193,06 €',
        'Summe brutto 1.236,81 €',
        'Offener Betrag 1.236,81 €',
        'Zahlung',
        `Bitte zahlen Sie 1.236,81 € bis zum 01.05.2026 unter Angabe von ${handle}.`,
        'Kontoinhaber Nordlicht Software GmbH',
        `Nordlicht Software GmbH · Rechnung ${handle} Seite 1 von 1`,
      ]),
    );
    const text = lines.join('\n');
    expect(text).toContain('2,5');
    expect(text).toContain('12,5 %');
    expect(text).toContain('USt.-Aufstellung');
    expect(text).not.toMatch(/Invoice|Total|Please pay|Due date/);
  });

  it('prints French labels, dates and money', async () => {
    const { env, id, handle } = await bookedIn('fr');

    const lines = await pdfLines(env, id);

    expect(lines).toEqual(
      expect.arrayContaining([
        'Nordlicht Software GmbH Facture',
        `Numéro de facture ${handle}`,
        'Date 01/04/2026',
        'Période de prestation 01/03/2026 – 31/03/2026',
        'Échéance 01/05/2026',
        'Total HT 1 043,75 €',
        'Total TTC 1 236,81 €',
        `Veuillez payer 1 236,81 € avant le 01/05/2026 en indiquant ${handle}.`,
      ]),
    );
    expect(lines.join('\n')).not.toMatch(/Invoice|Please pay|Due date/);
  });

  it('prints the reverse-charge note in the document language with the English alongside', async () => {
    const { env, id } = await bookedIn('de', 'reverse_charge');

    const text = (await pdfLines(env, id)).join(' ');

    expect(text).toContain(
      'Steuerschuldnerschaft des Leistungsempfängers (Artikel 196 der Richtlinie 2006/112/EG) / Reverse charge: VAT to be accounted for by the recipient',
    );
  });
});
