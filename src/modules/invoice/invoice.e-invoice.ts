import { DomainError } from '../../errors.ts';
import { minorUnitDigits } from '../../money/currency.ts';
import { Decimal } from '../../money/decimal.ts';
import type { BillingAddress } from '../customer/customer.entity.ts';
import { taxCategoryOf } from '../tax/tax-policy.ts';
import type { EInvoiceTask, LibraryFormat } from './invoice.e-invoice-writer.ts';
import { pdfFileName, renderPool } from './invoice.pdf.ts';
import { invoicePdfData } from './invoice.pdf-document.ts';
import { taxNoteIn } from './invoice.pdf-labels.ts';
import type { FacturXTask } from './invoice.pdf-worker.ts';
import { servicePeriod, shownPeriod } from './invoice.periods.ts';
import type { PrintableInvoice } from './invoice.reads.ts';
import { taxBreakdown } from './invoice.tax.ts';

/** The EN 16931 syntaxes an invoice can be exported in. */
export const E_INVOICE_SYNTAXES = ['ubl', 'cii', 'xrechnung'] as const;
export type EInvoiceSyntax = (typeof E_INVOICE_SYNTAXES)[number];

/** Media types a client asks for each syntax by; plain `application/xml` means UBL (as Peppol sends). */
export const E_INVOICE_MEDIA_TYPES: Record<string, EInvoiceSyntax> = {
  'application/xml': 'ubl',
  'application/ubl+xml': 'ubl',
  'application/cii+xml': 'cii',
};

/** The library's name of each syntax (@e-invoice-eu/core formats). */
const LIBRARY_FORMATS: Record<EInvoiceSyntax, LibraryFormat> = {
  ubl: 'UBL',
  cii: 'CII',
  xrechnung: 'XRECHNUNG-UBL',
};

/** BT-24 of each profile: plain EN 16931, or the German CIUS XRechnung 3.0 (in UBL). */
const CUSTOMIZATION_IDS: Record<EInvoiceProfile, string> = {
  en16931: 'urn:cen.eu:en16931:2017',
  xrechnung: 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0',
};

/** The rule set a document is written for: EN 16931 alone, or XRechnung on top of it. */
export type EInvoiceProfile = 'en16931' | 'xrechnung';

const profileOf = (syntax: EInvoiceSyntax): EInvoiceProfile =>
  syntax === 'xrechnung' ? 'xrechnung' : 'en16931';

/** UNTDID 1001 document types: 380 commercial invoice, 381 credit note. */
const DOCUMENT_TYPES = { invoice: '380', credit_note: '381' } as const;

/** UNCL 4461: 58 SEPA credit transfer (an IBAN), 30 credit transfer (any other account). */
const creditTransferCode = (iban: string): string =>
  /^(AT|BE|BG|CH|CY|CZ|DE|DK|EE|ES|FI|FR|GB|GR|HR|HU|IE|IS|IT|LI|LT|LU|LV|MC|MT|NL|NO|PL|PT|RO|SE|SI|SK|SM)/.test(
    iban,
  )
    ? '58'
    : '30';

/** UN/ECE rec. 20 "one" (C62): the service keeps no unit of measure on its lines. */
const UNIT = 'C62';

type Json = Record<string, unknown>;

/** Minor units as the exact decimal of major units that the XML carries: 12345 EUR → "123.45". */
function majorUnits(minor: number | string, currency: string, places?: number): string {
  const value = new Decimal(String(minor)).dividedBy(new Decimal(10).pow(minorUnitDigits(currency)));
  return places === undefined
    ? value.toFixed(minorUnitDigits(currency))
    : value.toDecimalPlaces(places).toFixed();
}

const plain = (value: string): string => new Decimal(value).toFixed();

function postalAddress(address: BillingAddress | null): Json {
  return {
    ...(address?.street1 ? { 'cbc:StreetName': address.street1 } : {}),
    ...(address?.street2 ? { 'cbc:AdditionalStreetName': address.street2 } : {}),
    ...(address?.city ? { 'cbc:CityName': address.city } : {}),
    ...(address?.postalCode ? { 'cbc:PostalZone': address.postalCode } : {}),
    ...(address?.state || address?.county ? { 'cbc:CountrySubentity': address.state ?? address.county } : {}),
    'cac:Country': { 'cbc:IdentificationCode': address?.country ?? '' },
  };
}

const isCountryCode = (value: string | null | undefined): boolean => !!value && /^[A-Z]{2}$/.test(value);

/** What EN 16931 needs that the invoice's parties may lack; the export is refused naming them. */
function missingTerms(view: PrintableInvoice, profile: EInvoiceProfile): string[] {
  const { seller, customer, invoice } = view;
  const missing: string[] = [];
  if (!isCountryCode(seller.address?.country)) missing.push("the seller profile's address country (BT-40)");
  if (!seller.vatId && !seller.taxNumber && !seller.companyId) {
    missing.push("the seller profile's VAT id, tax number or company registration (BR-CO-26)");
  }
  if (!seller.email) missing.push("the seller profile's e-mail, its electronic address (BT-34)");
  if (!customer.email) missing.push("the customer's e-mail, its electronic address (BT-49)");
  if (!isCountryCode(customer.billingAddress.country?.toUpperCase())) {
    missing.push("the customer's billing address country as a two-letter ISO code (BT-55)");
  }
  if (invoice.taxExempt === 'reverse_charge' && !(customer.taxIds ?? []).length) {
    missing.push("the customer's VAT id, which reverse charge requires (BR-AE-2)");
  }
  if (profile === 'xrechnung') missing.push(...missingXRechnungTerms(view));
  return missing;
}

/** What the XRechnung CIUS requires on top of EN 16931 (its BR-DE rules) that the parties may lack. */
function missingXRechnungTerms({ seller, customer }: PrintableInvoice): string[] {
  const missing: string[] = [];
  if (!customer.handle) {
    missing.push(
      "the customer's handle, sent as the buyer reference (BT-10, BR-DE-15): for a public buyer, its Leitweg-ID",
    );
  }
  if (!seller.address?.city) missing.push("the seller profile's address city (BT-37, BR-DE-3)");
  if (!seller.address?.postalCode) missing.push("the seller profile's postal code (BT-38, BR-DE-4)");
  if (!seller.phone) missing.push("the seller profile's phone, its contact telephone (BT-42, BR-DE-6)");
  if (!seller.iban) missing.push("the seller profile's IBAN, for the payment instructions (BG-16, BR-DE-1)");
  if (!customer.billingAddress.city) missing.push("the customer's billing address city (BT-52, BR-DE-8)");
  if (!customer.billingAddress.postalCode) {
    missing.push("the customer's billing address postal code (BT-53, BR-DE-9)");
  }
  return missing;
}

/**
 * The booked invoice in the UBL-shaped model @e-invoice-eu/core writes both syntaxes from. The
 * library checks no arithmetic: every amount here is the service's own, as booked.
 */
export function eInvoiceModel(view: PrintableInvoice, profile: EInvoiceProfile = 'en16931'): Json {
  const { invoice, seller, customer, items } = view;
  if (invoice.status !== 'booked' || !invoice.handle) {
    throw new DomainError('CONFLICT', 'a draft has no e-invoice yet: book it first');
  }
  const missing = missingTerms(view, profile);
  if (missing.length > 0) {
    const what = profile === 'xrechnung' ? 'an XRechnung' : 'an EN 16931 e-invoice';
    throw new DomainError('CONFLICT', `${what} needs ${missing.join('; ')}`);
  }
  refuseMixedNotSubjectToVat(items);
  const xrechnung = profile === 'xrechnung';
  const currency = invoice.currency;
  const money = (minor: number) => majorUnits(minor, currency);
  const amount = (key: string, minor: number) => ({
    [key]: money(minor),
    [`${key}@currencyID`]: currency,
  });
  const breakdown = taxBreakdown(items, invoice.taxExempt);
  const period = servicePeriod(items);
  const buyerVatId = customer.taxIds?.[0]?.value;
  const buyerName = customer.companyName || customer.name;
  const notes = [invoice.memo, seller.footer].filter((note): note is string => !!note);
  const vatCategory = (rate: string | null) => {
    const { category } = taxCategoryOf(rate, invoice.taxExempt);
    return {
      'cbc:ID': category,
      ...(category === 'O' ? {} : { 'cbc:Percent': category === 'S' ? plain(rate ?? '0') : '0' }),
      'cac:TaxScheme': { 'cbc:ID': 'VAT' },
    };
  };
  return {
    'ubl:Invoice': {
      'cbc:CustomizationID': CUSTOMIZATION_IDS[profile],
      ...(xrechnung ? { 'cbc:ProfileID': 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0' } : {}),
      'cbc:ID': invoice.handle,
      'cbc:IssueDate': invoice.date,
      ...(invoice.dueDate ? { 'cbc:DueDate': invoice.dueDate } : {}),
      'cbc:InvoiceTypeCode': DOCUMENT_TYPES[invoice.type],
      ...(notes.length > 0 ? { 'cbc:Note': notes } : {}),
      'cbc:DocumentCurrencyCode': currency,
      // BT-10: the customer's handle (for XRechnung required, and a public buyer's Leitweg-ID), or its id
      'cbc:BuyerReference': customer.handle ?? customer.id,
      ...(period
        ? {
            'cac:InvoicePeriod': {
              ...(period.start ? { 'cbc:StartDate': period.start } : {}),
              ...(period.end ? { 'cbc:EndDate': period.end } : {}),
            },
          }
        : {}),
      ...(view.creditedInvoiceHandle
        ? {
            'cac:BillingReference': [
              {
                'cac:InvoiceDocumentReference': {
                  'cbc:ID': view.creditedInvoiceHandle,
                  ...(view.creditedInvoiceDate ? { 'cbc:IssueDate': view.creditedInvoiceDate } : {}),
                },
              },
            ],
          }
        : {}),
      'cac:AccountingSupplierParty': {
        'cac:Party': {
          'cbc:EndpointID': seller.email ?? '',
          'cbc:EndpointID@schemeID': 'EM',
          'cac:PartyName': { 'cbc:Name': seller.legalName },
          'cac:PostalAddress': postalAddress(seller.address),
          'cac:PartyTaxScheme': [
            ...(seller.vatId
              ? [
                  {
                    'cbc:CompanyID': seller.vatId,
                    'cac:TaxScheme': { 'cbc:ID': 'VAT' },
                  },
                ]
              : []),
            ...(seller.taxNumber
              ? [
                  {
                    'cbc:CompanyID': seller.taxNumber,
                    'cac:TaxScheme': { 'cbc:ID': 'FC' },
                  },
                ]
              : []),
          ],
          'cac:PartyLegalEntity': {
            'cbc:RegistrationName': seller.legalName,
            ...(seller.companyId ? { 'cbc:CompanyID': seller.companyId } : {}),
          },
          ...(seller.email || seller.phone
            ? {
                'cac:Contact': {
                  // BT-41, which XRechnung requires (BR-DE-5): the profile names no person, so the company
                  ...(xrechnung ? { 'cbc:Name': seller.legalName } : {}),
                  ...(seller.phone ? { 'cbc:Telephone': seller.phone } : {}),
                  ...(seller.email ? { 'cbc:ElectronicMail': seller.email } : {}),
                },
              }
            : {}),
        },
      },
      'cac:AccountingCustomerParty': {
        'cac:Party': {
          'cbc:EndpointID': customer.email ?? '',
          'cbc:EndpointID@schemeID': 'EM',
          ...(customer.handle ? { 'cac:PartyIdentification': { 'cbc:ID': customer.handle } } : {}),
          'cac:PartyName': { 'cbc:Name': buyerName },
          'cac:PostalAddress': postalAddress({
            ...customer.billingAddress,
            country: customer.billingAddress.country?.toUpperCase() ?? null,
          }),
          ...(buyerVatId
            ? {
                'cac:PartyTaxScheme': {
                  'cbc:CompanyID': buyerVatId,
                  'cac:TaxScheme': { 'cbc:ID': 'VAT' },
                },
              }
            : {}),
          'cac:PartyLegalEntity': { 'cbc:RegistrationName': buyerName },
          ...(customer.companyName ? { 'cac:Contact': { 'cbc:Name': customer.name } } : {}),
        },
      },
      // The date of supply (BT-72) when the lines name no period. The library writes no CII delivery
      // block from an empty one, which the Factur-X schema requires: the writer adds it (withDeliveryBlock).
      'cac:Delivery': period ? {} : { 'cbc:ActualDeliveryDate': invoice.date },
      // XRechnung asks for the payment instructions on a credit note too (BR-DE-1)
      ...(seller.iban && (invoice.type === 'invoice' || xrechnung)
        ? {
            'cac:PaymentMeans': [
              {
                'cbc:PaymentMeansCode': creditTransferCode(seller.iban),
                'cbc:PaymentID': invoice.handle,
                'cac:PayeeFinancialAccount': {
                  'cbc:ID': seller.iban,
                  'cbc:Name': seller.legalName,
                  ...(seller.bic
                    ? {
                        'cac:FinancialInstitutionBranch': {
                          'cbc:ID': seller.bic,
                        },
                      }
                    : {}),
                },
              },
            ],
          }
        : {}),
      ...(seller.paymentInstructions
        ? { 'cac:PaymentTerms': { 'cbc:Note': seller.paymentInstructions } }
        : {}),
      'cac:TaxTotal': [
        {
          'cbc:TaxAmount': money(invoice.totalVat),
          'cbc:TaxAmount@currencyID': currency,
          'cac:TaxSubtotal': breakdown.map((row) => ({
            'cbc:TaxableAmount': money(row.taxableAmount),
            'cbc:TaxableAmount@currencyID': currency,
            'cbc:TaxAmount': money(row.taxAmount),
            'cbc:TaxAmount@currencyID': currency,
            'cac:TaxCategory': {
              ...vatCategory(row.taxRate),
              ...(row.exemptionReasonCode ? { 'cbc:TaxExemptionReasonCode': row.exemptionReasonCode } : {}),
              ...(row.exemptionReason
                ? {
                    'cbc:TaxExemptionReason': taxNoteIn(seller.language, row.exemptionReason),
                  }
                : {}),
            },
          })),
        },
      ],
      'cac:LegalMonetaryTotal': {
        ...amount('cbc:LineExtensionAmount', invoice.totalExclVat),
        ...amount('cbc:TaxExclusiveAmount', invoice.totalExclVat),
        ...amount('cbc:TaxInclusiveAmount', invoice.totalInclVat),
        // The document as issued: settlements come later and do not change it.
        ...amount('cbc:PayableAmount', invoice.totalInclVat),
      },
      'cac:InvoiceLine': items.map((item, index) => {
        const linePeriod = shownPeriod(item);
        // The net price per unit (BT-146): the net amount over the quantity, so that discounts and
        // tax-inclusive prices need no further terms.
        const netPrice = new Decimal(item.amount).dividedBy(item.quantity);
        return {
          'cbc:ID': String(index + 1),
          'cbc:InvoicedQuantity': plain(item.quantity),
          'cbc:InvoicedQuantity@unitCode': UNIT,
          ...amount('cbc:LineExtensionAmount', item.amount),
          ...(linePeriod
            ? {
                'cac:InvoicePeriod': {
                  ...(linePeriod.start ? { 'cbc:StartDate': linePeriod.start } : {}),
                  ...(linePeriod.end ? { 'cbc:EndDate': linePeriod.end } : {}),
                },
              }
            : {}),
          'cac:Item': {
            ...(item.description ? { 'cbc:Description': item.description } : {}),
            'cbc:Name': item.title,
            ...(item.sku ? { 'cac:SellersItemIdentification': { 'cbc:ID': item.sku } } : {}),
            'cac:ClassifiedTaxCategory': vatCategory(item.taxRate ?? null),
          },
          'cac:Price': {
            'cbc:PriceAmount': majorUnits(netPrice.toFixed(), currency, 6),
            'cbc:PriceAmount@currencyID': currency,
          },
        };
      }),
    },
  };
}

/** What the writer needs besides the model: the document's language and, for a credit note, BG-3. */
export function eInvoiceTask(view: PrintableInvoice, profile: EInvoiceProfile = 'en16931'): EInvoiceTask {
  return {
    model: eInvoiceModel(view, profile),
    lang: view.seller.language,
    preceding: view.creditedInvoiceHandle
      ? { handle: view.creditedInvoiceHandle, date: view.creditedInvoiceDate }
      : null,
  };
}

/**
 * Writes the booked invoice as an e-invoice on a render worker: the library takes seconds of CPU for
 * a long invoice (a 5,000-line UBL about 1.5 s on a quiet core), which would stall every other request
 * on the event loop. The model is built here, so a refusal is answered before any worker is asked.
 */
export async function renderEInvoice(view: PrintableInvoice, syntax: EInvoiceSyntax): Promise<string> {
  const task = {
    ...eInvoiceTask(view, profileOf(syntax)),
    format: LIBRARY_FORMATS[syntax],
  };
  return (await renderPool()).run(task, { name: 'writeEInvoice' });
}

/**
 * The booked invoice's PDF as a Factur-X / ZUGFeRD hybrid (EN 16931 profile): PDF/A-3 with its CII
 * embedded as factur-x.xml. A draft, or an invoice lacking a term EN 16931 requires, is refused here,
 * before any rendering, with the same conflict as its XML.
 */
export async function renderFacturXPdf(view: PrintableInvoice): Promise<Uint8Array> {
  const task: FacturXTask = {
    eInvoice: eInvoiceTask(view),
    pdf: invoicePdfData(view),
    fileName: pdfFileName(view.invoice),
  };
  return (await renderPool()).run(task, { name: 'renderFacturX' });
}

/**
 * BR-O-11: an invoice with a line not subject to VAT (no tax code, category O) can have no other VAT
 * category. Such an invoice books, and prints; its e-invoice is refused, naming the lines to split.
 */
function refuseMixedNotSubjectToVat(items: PrintableInvoice['items']): void {
  const untaxed = items.filter((item) => item.taxRate == null);
  if (untaxed.length === 0 || untaxed.length === items.length) return;
  const titles = untaxed.map((item) => `"${item.title}"`).join(', ');
  throw new DomainError(
    'CONFLICT',
    `an EN 16931 e-invoice cannot mix lines not subject to VAT (no tax code: ${titles}) with taxed lines ` +
      '(rule BR-O-11): invoice those lines separately, or give them a tax code',
  );
}
