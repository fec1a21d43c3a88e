import { inflateSync } from 'node:zlib';
import { extractText, getDocumentProxy } from 'unpdf';
import { beforeAll, describe, expect, it } from 'vitest';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { canValidate, fatal, validateEn16931 } from '../support/en16931.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { validateFacturXSchema } from '../support/xsd.ts';

// The first Factur-X of a fresh render worker loads pdfmake and @e-invoice-eu/core (about a second
// on a quiet machine, past the 10 s request limit on a loaded one): this file tests the document, and
// gives its requests a minute.
const t = setupTestApp({
  executionLimits: { timeoutMs: 60_000, maxResponseBytes: 10 * 1024 * 1024 },
});
const f = invoiceFixtures(t);
const validateOrSkip = canValidate || process.env.CI ? it : it.skip;

const PROFILE = `mutation ($input: SellerProfileUpdateInput!) {
  sellerProfileUpdate(input: $input) { userErrors { field message } } }`;
const BOOK = `mutation ($id: UUID!) { invoiceBook(id: $id) { invoice { handle } userErrors { message } } }`;
const CREDIT = `mutation ($invoiceId: UUID!) {
  creditNoteCreate(invoiceId: $invoiceId) { creditNote { id } userErrors { message } } }`;

/** The text of every element named `name` (any namespace prefix), in document order. */
const texts = (xml: string, name: string): string[] =>
  [...xml.matchAll(new RegExp(`<(?:\\w+:)?${name}(?:\\s[^>]*)?>([^<]*)</(?:\\w+:)?${name}>`, 'g'))].map(
    (match) => match[1] as string,
  );

const OBJECT_BREAK = '\n%%object%%\n';

/**
 * The PDF's objects as text: the file itself and every stream that inflates (object streams hold the
 * dictionaries of the attachment, the catalog and the output intent).
 */
function pdfObjects(pdf: Uint8Array): string {
  const raw = Buffer.from(pdf);
  const parts = [raw.toString('latin1')];
  let at = 0;
  for (;;) {
    const start = raw.indexOf('stream', at, 'latin1');
    if (start < 0) break;
    const body = start + (raw[start + 6] === 0x0d ? 8 : 7);
    const end = raw.indexOf('endstream', body, 'latin1');
    if (end < 0) break;
    try {
      parts.push(inflateSync(raw.subarray(body, end)).toString('latin1'));
    } catch {
      // not a deflated stream (the XMP, an image): it is in the raw text already
    }
    at = end + 9;
  }
  return parts.join(OBJECT_BREAK);
}

/**
 * The embedded files of a PDF, by name: the names as pdf.js lists them, the content the one deflated
 * stream that is a CII document (this pdf.js build lists attachments without their content).
 */
async function attachments(pdf: Uint8Array): Promise<Record<string, string>> {
  const document = await getDocumentProxy(new Uint8Array(pdf));
  const names = [...(((await document.getAttachments()) as Map<string, unknown> | null) ?? new Map()).keys()];
  const cii = pdfObjects(pdf)
    .split(OBJECT_BREAK)
    .filter((part) => part.startsWith('<?xml') && part.includes('CrossIndustryInvoice'));
  expect(cii.length, 'one embedded CII document').toBe(1);
  return Object.fromEntries(
    names.map((name) => [name, Buffer.from(cii[0] as string, 'latin1').toString('utf8')]),
  );
}

describe('the Factur-X / ZUGFeRD PDF of a booked invoice', () => {
  let env: TestEnvironment;
  let invoiceId: string;
  let creditNoteId: string;
  let handle: string;
  let pdf: Uint8Array;
  let creditPdf: Uint8Array;
  let xrechnung: string;

  const facturX = (id: string, headers: Record<string, string> = {}) =>
    t.rest('GET', `/invoices/${id}/facturx.pdf`, { env, headers });

  beforeAll(async () => {
    env = await t.createEnvironment('Development');
    await f.createTaxCode(env, 'DE19', '19');
    await f.createTaxCode(env, 'DE7', '7');
    const { sellerProfileUpdate } = await f.gql(env, PROFILE, {
      input: {
        legalName: 'Nordlicht Software GmbH',
        address: {
          street1: 'Hafenstraße 1',
          postalCode: '20457',
          city: 'Hamburg',
          country: 'DE',
        },
        vatId: 'DE123456789',
        email: 'billing@nordlicht.example',
        phone: '+49 40 1234567',
        iban: 'DE89370400440532013000',
        bic: 'COBADEFFXXX',
        language: 'de',
      },
    });
    expect(sellerProfileUpdate.userErrors).toEqual([]);
    const customerId = await f.createCustomer(env, {
      name: 'Marie Curie',
      email: 'ap@radium.example',
      companyName: 'Radium Analytique SAS',
      handle: '04011000-12345-34',
      billingAddress: {
        street1: '12 rue Curie',
        postalCode: '75005',
        city: 'Paris',
        country: 'FR',
      },
      taxIds: [{ type: 'eu_vat', value: 'FR40303265045' }],
    });
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
          quantity: 3,
          unitAmount: 1999,
          taxCode: 'DE7',
          discount: { percentage: 10 },
        },
      ],
    });
    invoiceId = invoice.id;
    const { invoiceBook } = await f.gql(env, BOOK, { id: invoiceId });
    expect(invoiceBook.userErrors).toEqual([]);
    handle = invoiceBook.invoice.handle;
    const { creditNoteCreate } = await f.gql(env, CREDIT, { invoiceId });
    creditNoteId = creditNoteCreate.creditNote.id;
    expect((await f.gql(env, BOOK, { id: creditNoteId })).invoiceBook.userErrors).toEqual([]);

    const invoiceResponse = await facturX(invoiceId);
    const creditResponse = await facturX(creditNoteId);
    expect(invoiceResponse.status, JSON.stringify(invoiceResponse.body)).toBe(200);
    expect(creditResponse.status, JSON.stringify(creditResponse.body)).toBe(200);
    const xrechnungResponse = await t.rest('GET', `/invoices/${invoiceId}/xrechnung.xml`, { env });
    expect(xrechnungResponse.status, JSON.stringify(xrechnungResponse.body)).toBe(200);
    xrechnung = xrechnungResponse.body;
    pdf = invoiceResponse.body;
    creditPdf = creditResponse.body;
    expect(invoiceResponse.headers.get('content-type')).toBe('application/pdf');
    expect(invoiceResponse.headers.get('content-disposition')).toBe(`inline; filename="${handle}.pdf"`);
  }, 120_000);

  it('is the invoice PDF, with the CII embedded as factur-x.xml carrying the booked terms', async () => {
    // then the printed invoice is unchanged: pdf.js reads its text back
    const text = (
      await extractText(await getDocumentProxy(new Uint8Array(pdf)), {
        mergePages: true,
      })
    ).text;
    expect(text).toContain('Nordlicht Software GmbH');
    expect(text).toContain('Radium Analytique SAS');
    expect(text).toContain(handle);

    // and its one attachment is the CII of the invoice
    const files = await attachments(pdf);
    expect(Object.keys(files)).toEqual(['factur-x.xml']);
    const xml = files['factur-x.xml'] as string;
    expect(texts(xml, 'ID')).toEqual(expect.arrayContaining([handle, 'DE123456789', 'FR40303265045']));
    expect(texts(xml, 'ID')).toContain('urn:cen.eu:en16931:2017');
    expect(texts(xml, 'TypeCode')).toContain('380');
    expect(texts(xml, 'DateTimeString')).toEqual(
      expect.arrayContaining(['20260401', '20260301', '20260331']),
    );
    expect(texts(xml, 'TaxBasisTotalAmount')).toEqual(['153.97']);
    expect(texts(xml, 'TaxTotalAmount')).toEqual(['22.78']);
    expect(texts(xml, 'GrandTotalAmount')).toEqual(['176.75']);
    expect(texts(xml, 'DuePayableAmount')).toEqual(['176.75']);
    expect(texts(xml, 'CalculatedAmount')).toEqual(['3.78', '19.00']);
    expect(texts(xml, 'IBANID')).toEqual(['DE89370400440532013000']);
  });

  it('declares PDF/A-3 and Factur-X in its XMP metadata, and the XML as the alternative of the PDF', () => {
    const objects = pdfObjects(pdf);
    // XMP: PDF/A-3b, the Factur-X extension schema and its properties
    expect(objects).toMatch(/<pdfaid:part>3<\/pdfaid:part>/);
    expect(objects).toMatch(/<pdfaid:conformance>B<\/pdfaid:conformance>/);
    expect(objects).toContain('urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#');
    expect(objects).toContain('<pdfaSchema:prefix>fx</pdfaSchema:prefix>');
    expect(objects).toMatch(/<fx:DocumentFileName>factur-x\.xml<\/fx:DocumentFileName>/);
    expect(objects).toMatch(/<fx:ConformanceLevel>EN 16931<\/fx:ConformanceLevel>/);
    expect(objects).toMatch(/<fx:DocumentType>INVOICE<\/fx:DocumentType>/);
    // the file specification: relationship Alternative, listed in the catalog's /AF; an sRGB output intent
    expect(objects).toMatch(/\/AFRelationship\s*\/Alternative/);
    expect(objects).toMatch(/\/AF\s*\[/);
    expect(objects).toMatch(/\/Subtype\s*\/text#2Fxml/);
    expect(objects).toMatch(/\/S\s*\/GTS_PDFA1/);
  });

  it('embeds a credit note with the invoice it corrects', async () => {
    const xml = (await attachments(creditPdf))['factur-x.xml'] as string;
    expect(texts(xml, 'TypeCode')).toContain('381');
    expect(xml).toContain(
      `<ram:InvoiceReferencedDocument><ram:IssuerAssignedID>${handle}</ram:IssuerAssignedID>`,
    );
  });

  it('embeds the CII /cii.xml answers, valid against the Factur-X EN 16931 XML Schema', async () => {
    // given the standalone CII of the invoice and of the credit note, and the XML their PDFs embed
    const cii = await t.rest('GET', `/invoices/${invoiceId}/cii.xml`, { env });
    const creditCii = await t.rest('GET', `/invoices/${creditNoteId}/cii.xml`, {
      env,
    });
    expect(cii.status).toBe(200);
    expect(creditCii.status).toBe(200);
    const documents = {
      cii: cii.body as string,
      creditCii: creditCii.body as string,
      embedded: (await attachments(pdf))['factur-x.xml'] as string,
      creditEmbedded: (await attachments(creditPdf))['factur-x.xml'] as string,
      // a document the schema must refuse: the check can fail
      broken: (cii.body as string).replace(
        '<ram:InvoiceCurrencyCode>',
        '<ram:Currency>EUR</ram:Currency><ram:InvoiceCurrencyCode>',
      ),
    };

    // when
    const errors = await validateFacturXSchema(documents);

    // then the PDF carries the same document, and every real one is schema-valid
    expect(documents.embedded).toBe(documents.cii);
    expect(documents.creditEmbedded).toBe(documents.creditCii);
    expect(errors).toEqual({
      cii: [],
      creditCii: [],
      embedded: [],
      creditEmbedded: [],
      broken: [
        expect.stringContaining(
          "Element '{urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100}Currency'",
        ),
      ],
    });
  });

  validateOrSkip(
    'embeds XML that passes the official EN 16931 rules, as does the XRechnung',
    async () => {
      const found = await validateEn16931({
        invoice: (await attachments(pdf))['factur-x.xml'] as string,
        creditNote: (await attachments(creditPdf))['factur-x.xml'] as string,
        xrechnung,
      });
      expect(fatal(found.invoice)).toEqual([]);
      expect(fatal(found.creditNote)).toEqual([]);
      expect(fatal(found.xrechnung)).toEqual([]);
    },
    240_000,
  );

  it('refuses a draft as its XML does, and answers 404 for an unknown invoice', async () => {
    const draft = await f.createInvoice(env, {
      customerId: await f.createCustomer(env, {
        billingAddress: { country: 'DE' },
      }),
      items: [{ title: 'X', quantity: 1, unitAmount: 100 }],
    });
    const drafted = await facturX(draft.id, { accept: 'application/pdf' });
    expect(drafted.status).toBe(409);
    expect(drafted.body.detail).toBe('a draft has no e-invoice yet: book it first');
    expect((await facturX(crypto.randomUUID())).status).toBe(404);
  });

  it('writes an XRechnung with its customization id, the handle as buyer reference and a seller contact', () => {
    expect(texts(xrechnung, 'CustomizationID')).toEqual([
      'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0',
    ]);
    expect(texts(xrechnung, 'ProfileID')).toEqual(['urn:fdc:peppol.eu:2017:poacc:billing:01:1.0']);
    expect(texts(xrechnung, 'BuyerReference')).toEqual(['04011000-12345-34']);
    expect(texts(xrechnung, 'Name')).toContain('Nordlicht Software GmbH');
    expect(texts(xrechnung, 'Telephone')).toEqual(['+49 40 1234567']);
    expect(texts(xrechnung, 'PayableAmount')).toEqual(['176.75']);
  });

  it('refuses an XRechnung naming what it lacks, and any e-invoice mixing untaxed with taxed lines (BR-O-11)', async () => {
    // given a booked invoice of a customer without handle, and one with a line without tax code
    const customerId = await f.createCustomer(env, {
      email: 'ap@plain.example',
      billingAddress: { country: 'DE', city: 'Berlin' },
    });
    const plain = await f.createInvoice(env, {
      customerId,
      items: [{ title: 'Licence', quantity: 1, unitAmount: 1000, taxCode: 'DE19' }],
    });
    const mixed = await f.createInvoice(env, {
      customerId,
      items: [
        { title: 'Licence', quantity: 1, unitAmount: 1000, taxCode: 'DE19' },
        { title: 'Fee', quantity: 1, unitAmount: 500 },
      ],
    });
    await f.gql(env, BOOK, { id: plain.id });
    await f.gql(env, BOOK, { id: mixed.id });

    // when
    const lacking = await t.rest('GET', `/invoices/${plain.id}/xrechnung.xml`, {
      env,
    });
    const mixedUbl = await t.rest('GET', `/invoices/${mixed.id}/ubl.xml`, {
      env,
    });

    // then
    expect(lacking.status).toBe(409);
    expect(lacking.body.detail).toBe(
      "an XRechnung needs the customer's handle, sent as the buyer reference (BT-10, BR-DE-15): for a public " +
        "buyer, its Leitweg-ID; the customer's billing address postal code (BT-53, BR-DE-9)",
    );
    expect((await t.rest('GET', `/invoices/${plain.id}/ubl.xml`, { env })).status).toBe(200);
    expect(mixedUbl.status).toBe(409);
    expect(mixedUbl.body.detail).toContain('(no tax code: "Fee")');
    expect(mixedUbl.body.detail).toContain('BR-O-11');
  });
});
