import { extractText, getDocumentProxy } from 'unpdf';
import { beforeAll, describe, expect, it } from 'vitest';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { PNG_1X1 } from './fixtures.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

const PROFILE = `mutation ($input: SellerProfileUpdateInput!) {
  sellerProfileUpdate(input: $input) { userErrors { field message } } }`;
const BOOK = `mutation ($id: UUID!) { invoiceBook(id: $id) { invoice { handle } userErrors { message } } }`;
const CREDIT = `mutation ($invoiceId: UUID!) {
  creditNoteCreate(invoiceId: $invoiceId) { creditNote { id } userErrors { message } } }`;
const CUSTOMER = `mutation ($input: CustomerCreateInput!) {
  customerCreate(input: $input) { customer { id } userErrors { message } } }`;

/** The text lines of every page, as pdf.js reads them back. */
async function pdfLines(env: TestEnvironment, id: string): Promise<string[]> {
  const response = await t.rest('GET', `/invoices/${id}`, { env, headers: { accept: 'application/pdf' } });
  expect(response.status).toBe(200);
  const pdf = await getDocumentProxy(new Uint8Array(response.body));
  return (await extractText(pdf, { mergePages: true })).text.split('\n');
}

describe('the invoice PDF names what EU VAT law (art. 226) requires', () => {
  let env: TestEnvironment;
  let customerId: string;

  const setProfile = async (input: Record<string, unknown>) => {
    const { sellerProfileUpdate } = await f.gql(env, PROFILE, { input });
    expect(sellerProfileUpdate.userErrors).toEqual([]);
  };

  const book = async (id: string): Promise<string> => {
    const { invoiceBook } = await f.gql(env, BOOK, { id });
    expect(invoiceBook.userErrors).toEqual([]);
    return invoiceBook.invoice.handle;
  };

  beforeAll(async () => {
    env = await t.createEnvironment('Development');
    await f.createTaxCode(env, 'DE19', '19');
    await f.createTaxCode(env, 'DE7', '7');
    await setProfile({
      legalName: 'Nordlicht Software GmbH',
      address: { street1: 'Hafenstraße 1', postalCode: '20457', city: 'Hamburg', country: 'DE' },
      vatId: 'DE123456789',
      taxNumber: '22/815/08150',
      companyId: 'HRB 123456 Hamburg',
      email: 'billing@nordlicht.example',
      phone: '+49 40 1234567',
      iban: 'DE89370400440532013000',
      bic: 'COBADEFFXXX',
      paymentInstructions: 'Bank transfer only.',
      footer: 'Managing director: Jane Doe · Registered in Hamburg',
      logo: PNG_1X1,
    });
    const { customerCreate } = await f.gql(env, CUSTOMER, {
      input: {
        name: 'Marie Curie',
        companyName: 'Radium Analytique SAS',
        currency: 'EUR',
        paymentTerm: 'net30',
        billingAddress: {
          street1: '12 rue Pierre et Marie Curie',
          postalCode: '75005',
          city: 'Paris',
          country: 'FR',
        },
        taxIds: [{ type: 'eu_vat', value: 'FR40303265045' }],
      },
    });
    expect(customerCreate.userErrors).toEqual([]);
    customerId = customerCreate.customer.id;
  });

  it('prints seller, buyer, VAT ids, service period, VAT per rate, due date and payment details; booked, it keeps them', async () => {
    // given a booked invoice at 19 % and 7 % for March
    const invoice = await f.createInvoice(env, {
      customerId,
      date: '2026-04-01',
      items: [
        {
          title: 'Hosting',
          quantity: 1,
          unitAmount: 10000,
          taxCode: 'DE19',
          periodStart: '2026-03-01',
          periodEnd: '2026-04-01',
        },
        {
          title: 'Handbook',
          quantity: 2,
          unitAmount: 2500,
          taxCode: 'DE7',
          periodStart: '2026-03-15',
          periodEnd: '2026-03-15',
        },
      ],
    });
    const handle = await book(invoice.id);
    // and the seller moves afterwards
    await setProfile({ legalName: 'Nordlicht AG', iban: 'GB82WEST12345698765432', footer: 'New footer' });

    // when
    const lines = await pdfLines(env, invoice.id);

    // then 100.00 × 19 % = 19.00 and 50.00 × 7 % = 3.50
    expect(lines).toEqual(
      expect.arrayContaining([
        'Nordlicht Software GmbH Invoice',
        'Hafenstraße 1 · 20457 Hamburg · DE',
        'VAT ID DE123456789 · Tax no. 22/815/08150 · Reg. HRB 123456 Hamburg',
        'billing@nordlicht.example · +49 40 1234567',
        `Invoice number ${handle}`,
        'Date 2026-04-01',
        'Service period 2026-03-01 – 2026-03-31',
        'Due date 2026-05-01',
        'Currency EUR',
        'Radium Analytique SAS',
        'Marie Curie',
        '12 rue Pierre et Marie Curie',
        '75005 Paris',
        'VAT ID FR40303265045',
        '7% 50.00 3.50',
        '19% 100.00 19.00',
        'Total excl. VAT €150.00',
        'VAT €22.50',
        'Total incl. VAT €172.50',
        'Amount due €172.50',
        'Payment',
        `Please pay €172.50 by 2026-05-01, quoting ${handle}.`,
        'Account holder Nordlicht Software GmbH',
        'IBAN DE89 3704 0044 0532 0130 00',
        'BIC COBADEFFXXX',
        'Bank transfer only.',
        'Managing director: Jane Doe · Registered in Hamburg',
        `Nordlicht Software GmbH · Invoice ${handle} Page 1 of 1`,
      ]),
    );
    expect(lines.join('\n')).not.toContain('Nordlicht AG');
    expect(lines.join('\n')).not.toContain('DRAFT');

    // and a draft shows the live profile, the supply date and DRAFT across the page
    const draft = await f.createInvoice(env, {
      customerId,
      date: '2026-04-02',
      items: [{ title: 'Setup', quantity: 1, unitAmount: 5000, taxCode: 'DE19' }],
    });
    const draftLines = await pdfLines(env, draft.id);
    expect(draftLines).toEqual(
      expect.arrayContaining([
        'Nordlicht AG Invoice',
        'Invoice number DRAFT',
        'Supply date 2026-04-02',
        'IBAN GB82 WEST 1234 5698 7654 32',
        'New footer',
        'DRAFT',
      ]),
    );
  });

  it('prints the reverse-charge note with both VAT ids, and a credit note cites the invoice it corrects', async () => {
    // given a reverse-charge customer's booked invoice, credited by a booked credit note
    const { customerCreate } = await f.gql(env, CUSTOMER, {
      input: {
        name: 'Bruxelles SA',
        currency: 'EUR',
        billingAddress: { street1: 'Rue Neuve 1', postalCode: '1000', city: 'Bruxelles', country: 'BE' },
        taxIds: [{ type: 'eu_vat', value: 'BE0123456789' }],
        taxExempt: 'reverse_charge',
      },
    });
    const invoice = await f.createInvoice(env, {
      customerId: customerCreate.customer.id,
      date: '2026-04-03',
      items: [{ title: 'Licence', quantity: 1, unitAmount: 10000, taxCode: 'DE19' }],
    });
    const handle = await book(invoice.id);
    const { creditNoteCreate } = await f.gql(env, CREDIT, { invoiceId: invoice.id });
    const creditHandle = await book(creditNoteCreate.creditNote.id);

    // when
    const invoiceText = (await pdfLines(env, invoice.id)).join('\n');
    const creditLines = await pdfLines(env, creditNoteCreate.creditNote.id);

    // then
    expect(invoiceText).toContain('VAT ID BE0123456789');
    expect(invoiceText).toContain('VAT ID DE123456789');
    expect(invoiceText).toContain('0% reverse charge 100.00 0.00');
    expect(invoiceText.replace(/\s+/g, ' ')).toContain(
      'Reverse charge: VAT to be accounted for by the recipient (Article 196, Council Directive 2006/112/EC)',
    );
    expect(creditLines).toEqual(
      expect.arrayContaining([
        'Nordlicht AG Credit note',
        `Credit note number ${creditHandle}`,
        `Credits invoice ${handle} of 2026-04-03`,
        'Bruxelles SA',
      ]),
    );
    // a credit note asks for no payment
    expect(creditLines.join('\n')).not.toContain('Please pay');
  });
});
