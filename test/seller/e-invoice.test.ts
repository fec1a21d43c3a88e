import { beforeAll, describe, expect, it } from 'vitest';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { canValidate, fatal, validateEn16931 } from '../support/en16931.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { validateFacturXSchema } from '../support/xsd.ts';

// The first e-invoice of a fresh render worker loads pdfmake and @e-invoice-eu/core (about a second
// on a quiet machine, past the 10 s request limit on a loaded one), and a worker idle for a minute
// (while the validator runs) exits: this file tests the documents, and gives its requests a minute.
const t = setupTestApp({ executionLimits: { timeoutMs: 60_000, maxResponseBytes: 10 * 1024 * 1024 } });
const f = invoiceFixtures(t);

const validateOrSkip = canValidate || process.env.CI ? it : it.skip;

const PROFILE = `mutation ($input: SellerProfileUpdateInput!) {
  sellerProfileUpdate(input: $input) { userErrors { field message } } }`;
const BOOK = `mutation ($id: UUID!) { invoiceBook(id: $id) { invoice { handle } userErrors { message } } }`;
const CREDIT = `mutation ($invoiceId: UUID!) {
  creditNoteCreate(invoiceId: $invoiceId) { creditNote { id } userErrors { message } } }`;
const CUSTOMER = `mutation ($input: CustomerCreateInput!) {
  customerCreate(input: $input) { customer { id } userErrors { message } } }`;

/** `20260401` (CII's format 102) as `2026-04-01`. */
const dashed = (date: string): string => date.replace(/^(\d{4})(\d{2})(\d{2})$/, '$1-$2-$3');

/** The text of every element named `name` (any namespace prefix), in document order. */
function texts(xml: string, name: string): string[] {
  return [
    ...xml.matchAll(new RegExp(`<(?:\\w+:)?${name}(?:\\s[^>]*)?>([^<]*)</(?:\\w+:)?${name}>`, 'g')),
  ].map((match) => match[1] as string);
}

/**
 * The contents of every element named `name` (any namespace prefix), in document order; for elements
 * that do not nest in themselves, as every block looked into here.
 */
function blocks(xml: string, name: string): string[] {
  return [
    ...xml.matchAll(new RegExp(`<(?:\\w+:)?${name}(?:\\s[^>]*)?>([\\s\\S]*?)</(?:\\w+:)?${name}>`, 'g')),
  ].map((match) => match[1] as string);
}

/** The texts at a path of element names: each step looks into the first block of that name, the last names the texts. */
function at(xml: string, ...path: string[]): string[] {
  const last = path.at(-1) as string;
  const scope = path.slice(0, -1).reduce((inner, name) => blocks(inner, name)[0] ?? '', xml);
  return texts(scope, last);
}

/** The attribute `attribute` of the elements named `name`. */
function attributes(xml: string, name: string, attribute: string): string[] {
  return [...xml.matchAll(new RegExp(`<(?:\\w+:)?${name}\\s[^>]*\\b${attribute}="([^"]*)"`, 'g'))].map(
    (match) => match[1] as string,
  );
}

describe('EN 16931 e-invoices of a booked invoice', () => {
  let env: TestEnvironment;
  let invoiceId: string;
  let handle: string;

  const xml = async (id: string, accept: string) => {
    const response = await t.rest('GET', `/invoices/${id}`, { env, headers: { accept } });
    return { response, text: typeof response.body === 'string' ? response.body : '' };
  };

  beforeAll(async () => {
    env = await t.createEnvironment('Development');
    await f.createTaxCode(env, 'DE19', '19');
    await f.createTaxCode(env, 'DE7', '7');
    const { sellerProfileUpdate } = await f.gql(env, PROFILE, {
      input: {
        legalName: 'Nordlicht Software GmbH',
        address: { street1: 'Hafenstraße 1', postalCode: '20457', city: 'Hamburg', country: 'DE' },
        vatId: 'DE123456789',
        companyId: 'HRB 123456',
        email: 'billing@nordlicht.example',
        iban: 'DE89370400440532013000',
        bic: 'COBADEFFXXX',
        paymentInstructions: 'Bank transfer within 30 days.',
      },
    });
    expect(sellerProfileUpdate.userErrors).toEqual([]);
    const { customerCreate } = await f.gql(env, CUSTOMER, {
      input: {
        name: 'Marie Curie',
        email: 'ap@radium.example',
        companyName: 'Radium Analytique SAS',
        handle: 'radium',
        currency: 'EUR',
        paymentTerm: 'net30',
        billingAddress: { street1: '12 rue Curie', postalCode: '75005', city: 'Paris', country: 'FR' },
        taxIds: [{ type: 'eu_vat', value: 'FR40303265045' }],
      },
    });
    const invoice = await f.createInvoice(env, {
      customerId: customerCreate.customer.id,
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
        { title: 'Handbook', quantity: 3, unitAmount: 1999, taxCode: 'DE7', discount: { percentage: 10 } },
      ],
    });
    invoiceId = invoice.id;
    const { invoiceBook } = await f.gql(env, BOOK, { id: invoiceId });
    expect(invoiceBook.userErrors).toEqual([]);
    handle = invoiceBook.invoice.handle;
  });

  // 100.00 at 19 % = 19.00; 3 × 19.99 − 10 % = 53.97 at 7 % = 3.78 (3.7779); net 153.97, VAT 22.78, gross 176.75
  const EXPECTED = {
    number: 'INV-000001',
    seller: 'Nordlicht Software GmbH',
    buyer: 'Radium Analytique SAS',
  };

  it.each([
    ['application/xml', 'Invoice', 'application/xml; charset=utf-8'],
    ['application/ubl+xml', 'Invoice', 'application/ubl+xml; charset=utf-8'],
    ['application/cii+xml', 'CrossIndustryInvoice', 'application/cii+xml; charset=utf-8'],
  ])('answers %s with the %s syntax and every mandatory business term', async (accept, root, type) => {
    const { response, text } = await xml(invoiceId, accept);
    expect(response.status, text).toBe(200);
    expect(response.headers.get('content-type')).toBe(type);
    expect(response.headers.get('content-disposition')).toBe(`inline; filename="${handle}.xml"`);
    expect(text).toMatch(new RegExp(`<(\\w+:)?${root}[\\s>]`));
    expect(handle).toBe(EXPECTED.number);
    if (root === 'Invoice') {
      // UBL: BT-1, BT-2, BT-3, BT-5, BT-9, BT-27, BT-31, BT-40, BT-44, BT-48, BT-55, BT-106, BT-109, BT-110, BT-112, BT-115
      expect(texts(text, 'ID')).toContain(handle);
      expect(texts(text, 'IssueDate')).toEqual(['2026-04-01']);
      expect(texts(text, 'DueDate')).toEqual(['2026-05-01']);
      expect(texts(text, 'InvoiceTypeCode')).toEqual(['380']);
      expect(texts(text, 'DocumentCurrencyCode')).toEqual(['EUR']);
      expect(texts(text, 'RegistrationName')).toEqual([EXPECTED.seller, EXPECTED.buyer]);
      expect(texts(text, 'CompanyID')).toEqual(
        expect.arrayContaining(['DE123456789', 'FR40303265045', 'HRB 123456']),
      );
      expect(texts(text, 'IdentificationCode')).toEqual(['DE', 'FR']);
      expect(texts(text, 'StartDate')).toContain('2026-03-01');
      expect(texts(text, 'EndDate')).toContain('2026-03-31');
      expect(texts(text, 'LineExtensionAmount')).toEqual(['153.97', '100.00', '53.97']);
      expect(texts(text, 'TaxExclusiveAmount')).toEqual(['153.97']);
      expect(texts(text, 'TaxInclusiveAmount')).toEqual(['176.75']);
      expect(texts(text, 'PayableAmount')).toEqual(['176.75']);
      expect(texts(text, 'TaxableAmount')).toEqual(['53.97', '100.00']);
      expect(texts(text, 'TaxAmount')).toEqual(['22.78', '3.78', '19.00']);
      expect(texts(text, 'Percent')).toEqual(expect.arrayContaining(['7', '19']));
      expect(texts(text, 'PaymentMeansCode')).toEqual(['58']);
      expect(texts(text, 'ID')).toEqual(expect.arrayContaining(['DE89370400440532013000', 'COBADEFFXXX']));
    } else {
      // CII: the same terms in their CII places
      expect(texts(text, 'ID')).toContain(handle);
      expect(texts(text, 'DateTimeString')).toEqual(expect.arrayContaining(['20260401', '20260501']));
      expect(texts(text, 'TypeCode')).toContain('380');
      expect(texts(text, 'InvoiceCurrencyCode')).toEqual(['EUR']);
      expect(texts(text, 'Name')).toEqual(expect.arrayContaining([EXPECTED.seller, EXPECTED.buyer]));
      expect(texts(text, 'ID')).toEqual(expect.arrayContaining(['DE123456789', 'FR40303265045']));
      expect(texts(text, 'CountryID')).toEqual(['DE', 'FR']);
      expect(texts(text, 'LineTotalAmount')).toEqual(expect.arrayContaining(['153.97', '100.00', '53.97']));
      expect(texts(text, 'TaxBasisTotalAmount')).toEqual(['153.97']);
      expect(texts(text, 'TaxTotalAmount')).toEqual(['22.78']);
      expect(texts(text, 'GrandTotalAmount')).toEqual(['176.75']);
      expect(texts(text, 'DuePayableAmount')).toEqual(['176.75']);
      expect(texts(text, 'CalculatedAmount')).toEqual(['3.78', '19.00']);
      expect(texts(text, 'BasisAmount')).toEqual(['53.97', '100.00']);
      expect(texts(text, 'IBANID')).toEqual(['DE89370400440532013000']);
    }
  });

  it('puts every mandatory business term where each syntax places it, with the booked value', async () => {
    // given the booked invoice in both syntaxes (the Factur-X PDF embeds the same CII: factur-x.test.ts)
    const ubl = (await xml(invoiceId, 'application/xml')).text;
    const cii = (await xml(invoiceId, 'application/cii+xml')).text;
    const ciiSettlement = blocks(cii, 'ApplicableHeaderTradeSettlement')[0] ?? '';

    // then each term is at its place in UBL and in CII
    const terms: [string, string[], string[], string[]][] = [
      // [term, UBL, CII, expected]
      ['BT-1 invoice number', texts(ubl, 'ID').slice(0, 1), at(cii, 'ExchangedDocument', 'ID'), [handle]],
      [
        'BT-2 issue date',
        texts(ubl, 'IssueDate'),
        at(cii, 'ExchangedDocument', 'IssueDateTime', 'DateTimeString').map(dashed),
        ['2026-04-01'],
      ],
      ['BT-3 type code', texts(ubl, 'InvoiceTypeCode'), at(cii, 'ExchangedDocument', 'TypeCode'), ['380']],
      ['BT-5 currency', texts(ubl, 'DocumentCurrencyCode'), texts(cii, 'InvoiceCurrencyCode'), ['EUR']],
      [
        'BT-9 due date',
        texts(ubl, 'DueDate'),
        at(ciiSettlement, 'SpecifiedTradePaymentTerms', 'DueDateDateTime', 'DateTimeString').map(dashed),
        ['2026-05-01'],
      ],
      [
        'BT-27 seller name',
        at(ubl, 'AccountingSupplierParty', 'PartyLegalEntity', 'RegistrationName'),
        at(cii, 'SellerTradeParty', 'Name').slice(0, 1),
        [EXPECTED.seller],
      ],
      [
        'BT-31 seller VAT id',
        at(ubl, 'AccountingSupplierParty', 'PartyTaxScheme', 'CompanyID'),
        at(cii, 'SellerTradeParty', 'SpecifiedTaxRegistration', 'ID'),
        ['DE123456789'],
      ],
      [
        'BT-40 seller country',
        at(ubl, 'AccountingSupplierParty', 'PostalAddress', 'IdentificationCode'),
        at(cii, 'SellerTradeParty', 'PostalTradeAddress', 'CountryID'),
        ['DE'],
      ],
      [
        'BT-44 buyer name',
        at(ubl, 'AccountingCustomerParty', 'PartyLegalEntity', 'RegistrationName'),
        at(cii, 'BuyerTradeParty', 'Name').slice(0, 1),
        [EXPECTED.buyer],
      ],
      [
        'BT-48 buyer VAT id',
        at(ubl, 'AccountingCustomerParty', 'PartyTaxScheme', 'CompanyID'),
        at(cii, 'BuyerTradeParty', 'SpecifiedTaxRegistration', 'ID'),
        ['FR40303265045'],
      ],
      [
        'BT-55 buyer country',
        at(ubl, 'AccountingCustomerParty', 'PostalAddress', 'IdentificationCode'),
        at(cii, 'BuyerTradeParty', 'PostalTradeAddress', 'CountryID'),
        ['FR'],
      ],
      [
        'BT-106 sum of line net amounts',
        at(ubl, 'LegalMonetaryTotal', 'LineExtensionAmount'),
        at(ciiSettlement, 'SpecifiedTradeSettlementHeaderMonetarySummation', 'LineTotalAmount'),
        ['153.97'],
      ],
      [
        'BT-109 total without VAT',
        at(ubl, 'LegalMonetaryTotal', 'TaxExclusiveAmount'),
        at(ciiSettlement, 'SpecifiedTradeSettlementHeaderMonetarySummation', 'TaxBasisTotalAmount'),
        ['153.97'],
      ],
      [
        'BT-110 total VAT',
        texts(blocks(ubl, 'TaxTotal')[0] ?? '', 'TaxAmount').slice(0, 1),
        at(ciiSettlement, 'SpecifiedTradeSettlementHeaderMonetarySummation', 'TaxTotalAmount'),
        ['22.78'],
      ],
      [
        'BT-112 total with VAT',
        at(ubl, 'LegalMonetaryTotal', 'TaxInclusiveAmount'),
        at(ciiSettlement, 'SpecifiedTradeSettlementHeaderMonetarySummation', 'GrandTotalAmount'),
        ['176.75'],
      ],
      [
        'BT-115 amount due',
        at(ubl, 'LegalMonetaryTotal', 'PayableAmount'),
        at(ciiSettlement, 'SpecifiedTradeSettlementHeaderMonetarySummation', 'DuePayableAmount'),
        ['176.75'],
      ],
    ];
    for (const [term, inUbl, inCii, expected] of terms) {
      expect({ term, ubl: inUbl }).toEqual({ term, ubl: expected });
      expect({ term, cii: inCii }).toEqual({ term, cii: expected });
    }
    // in the document's currency
    expect(attributes(ciiSettlement, 'TaxTotalAmount', 'currencyID')).toEqual(['EUR']);
    expect(attributes(blocks(ubl, 'LegalMonetaryTotal')[0] ?? '', 'PayableAmount', 'currencyID')).toEqual([
      'EUR',
    ]);

    // and BG-23, the VAT breakdown: per rate its category, rate, taxable amount (BT-116) and VAT (BT-117)
    const ublBreakdown = blocks(ubl, 'TaxSubtotal').map((subtotal) => ({
      category: at(subtotal, 'TaxCategory', 'ID')[0],
      rate: at(subtotal, 'TaxCategory', 'Percent')[0],
      taxable: texts(subtotal, 'TaxableAmount')[0],
      vat: texts(subtotal, 'TaxAmount')[0],
    }));
    const ciiBreakdown = blocks(ciiSettlement, 'ApplicableTradeTax').map((tax) => ({
      category: texts(tax, 'CategoryCode')[0],
      rate: texts(tax, 'RateApplicablePercent')[0],
      taxable: texts(tax, 'BasisAmount')[0],
      vat: texts(tax, 'CalculatedAmount')[0],
    }));
    const breakdown = [
      { category: 'S', rate: '7', taxable: '53.97', vat: '3.78' },
      { category: 'S', rate: '19', taxable: '100.00', vat: '19.00' },
    ];
    const byRate = (rows: { rate?: string }[]) => [...rows].sort((a, b) => Number(a.rate) - Number(b.rate));
    expect(byRate(ublBreakdown)).toEqual(breakdown);
    expect(byRate(ciiBreakdown).map((row) => ({ ...row, rate: String(Number(row.rate)) }))).toEqual(
      breakdown,
    );
  });

  validateOrSkip(
    'passes the official EN 16931 rules in UBL and CII',
    async () => {
      const found = await validateEn16931({
        ubl: (await xml(invoiceId, 'application/xml')).text,
        cii: (await xml(invoiceId, 'application/cii+xml')).text,
      });
      expect(fatal(found.ubl)).toEqual([]);
      expect(fatal(found.cii)).toEqual([]);
    },
    240_000,
  );

  validateOrSkip(
    'a reverse-charge invoice and a credit note citing its invoice pass the rules too',
    async () => {
      // given a reverse-charge customer's booked invoice, and its booked credit note
      const { customerCreate } = await f.gql(env, CUSTOMER, {
        input: {
          name: 'Bruxelles SA',
          email: 'factures@bruxelles.example',
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
      const booked = (await f.gql(env, BOOK, { id: invoice.id })).invoiceBook.invoice.handle;
      const { creditNoteCreate } = await f.gql(env, CREDIT, { invoiceId: invoice.id });
      await f.gql(env, BOOK, { id: creditNoteCreate.creditNote.id });

      const documents: Record<string, string> = {};
      for (const [id, accept, name] of [
        [invoice.id, 'application/xml', 'rc.ubl'],
        [invoice.id, 'application/cii+xml', 'rc.cii'],
        [creditNoteCreate.creditNote.id, 'application/xml', 'cn.ubl'],
        [creditNoteCreate.creditNote.id, 'application/cii+xml', 'cn.cii'],
      ] as const) {
        const { response, text } = await xml(id, accept);
        expect(response.status, `${name}: ${JSON.stringify(response.body)}`).toBe(200);
        if (name.startsWith('rc')) expect(text).toContain('VATEX-EU-AE');
        if (name.startsWith('cn')) expect(text).toContain(booked);
        documents[name] = text;
      }
      const found = await validateEn16931(documents);
      for (const name of Object.keys(documents)) {
        expect(fatal(found[name]), `${name}\n${documents[name]}`).toEqual([]);
      }
      // and their CII (with a date of supply, BT-72, instead of a period) is valid against the Factur-X XSD
      expect(
        await validateFacturXSchema({ rc: documents['rc.cii'] ?? '', cn: documents['cn.cii'] ?? '' }),
      ).toEqual({
        rc: [],
        cn: [],
      });
    },
    240_000,
  );

  it('answers the same documents on the explicit paths /ubl.xml and /cii.xml, whatever the Accept header', async () => {
    // when
    const ubl = await t.rest('GET', `/invoices/${invoiceId}/ubl.xml`, { env });
    const cii = await t.rest('GET', `/invoices/${invoiceId}/cii.xml`, {
      env,
      headers: { accept: 'application/json' },
    });
    const draft = await f.createInvoice(env, {
      customerId: await f.createCustomer(env, { billingAddress: { country: 'DE' } }),
      items: [{ title: 'X', quantity: 1, unitAmount: 100 }],
    });
    const drafted = await t.rest('GET', `/invoices/${draft.id}/cii.xml`, { env });
    const missing = await t.rest('GET', `/invoices/${crypto.randomUUID()}/ubl.xml`, { env });

    // then they are the documents Accept negotiates, as application/xml files named by the number
    for (const [response, accept, root] of [
      [ubl, 'application/ubl+xml', 'Invoice'],
      [cii, 'application/cii+xml', 'CrossIndustryInvoice'],
    ] as const) {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/xml; charset=utf-8');
      expect(response.headers.get('content-disposition')).toBe(`inline; filename="${handle}.xml"`);
      expect(response.body).toContain(`${root} `);
      expect(texts(response.body, 'ID')).toContain(handle);
      expect(response.body).toBe((await xml(invoiceId, accept)).text);
    }
    expect(drafted.status).toBe(409);
    expect(drafted.body.detail).toBe('a draft has no e-invoice yet: book it first');
    expect(missing.status).toBe(404);
  });

  it('refuses a draft, and names what the seller profile lacks', async () => {
    // given a draft, and an environment without a seller profile
    const draft = await f.createInvoice(env, {
      customerId: await f.createCustomer(env, { billingAddress: { country: 'DE' } }),
      items: [{ title: 'X', quantity: 1, unitAmount: 100 }],
    });
    const bare = await t.createEnvironment('Bare');
    const bareInvoice = await f.createInvoice(bare, {
      customerId: await f.createCustomer(bare, { billingAddress: { country: 'DE' } }),
      items: [{ title: 'X', quantity: 1, unitAmount: 100 }],
    });
    await f.gql(bare, BOOK, { id: bareInvoice.id });

    // when
    const drafted = await t.rest('GET', `/invoices/${draft.id}`, {
      env,
      headers: { accept: 'application/xml' },
    });
    const lacking = await t.rest('GET', `/invoices/${bareInvoice.id}`, {
      env: bare,
      headers: { accept: 'application/cii+xml' },
    });

    // then
    expect(drafted.status).toBe(409);
    expect(drafted.body.detail).toBe('a draft has no e-invoice yet: book it first');
    expect(lacking.status).toBe(409);
    expect(lacking.body.detail).toContain("the seller profile's address country (BT-40)");
  });
});
