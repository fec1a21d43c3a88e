import { Decimal } from '../../money/decimal.ts';
import type { SellerLanguage } from '../seller/seller.entity.ts';

/**
 * The words of the invoice PDF in the seller profile's language. Keys are the English texts, with
 * {name} placeholders; English prints the key. Numbers, money and dates go through Intl in the
 * language's locale; English keeps ISO dates, as before languages.
 */
const WORDS: Record<Exclude<SellerLanguage, 'en'>, Record<string, string>> = {
  de: {
    Invoice: 'Rechnung',
    'Credit note': 'Gutschrift',
    DRAFT: 'ENTWURF',
    'Draft {kind}': 'Entwurf: {kind}',
    'VAT ID {id}': 'USt-IdNr. {id}',
    'Tax no. {id}': 'Steuernr. {id}',
    'Reg. {id}': 'Reg.-Nr. {id}',
    'Supply date': 'Leistungsdatum',
    'Service period': 'Leistungszeitraum',
    '{number} of {date}': '{number} vom {date}',
    'Invoice number': 'Rechnungsnummer',
    'Credit note number': 'Gutschriftsnummer',
    Date: 'Datum',
    'Due date': 'Fällig am',
    Currency: 'Währung',
    'Credits invoice': 'Korrigiert Rechnung',
    'Bill to': 'Rechnungsempfänger',
    'Customer no. {id}': 'Kundennr. {id}',
    'Please pay {amount} by {date}, quoting {number}.':
      'Bitte zahlen Sie {amount} bis zum {date} unter Angabe von {number}.',
    'Please pay {amount} by {date}.': 'Bitte zahlen Sie {amount} bis zum {date}.',
    'Please pay {amount}, quoting {number}.': 'Bitte zahlen Sie {amount} unter Angabe von {number}.',
    'Please pay {amount}.': 'Bitte zahlen Sie {amount}.',
    'Account holder {name}': 'Kontoinhaber {name}',
    Payment: 'Zahlung',
    Item: 'Position',
    Qty: 'Menge',
    'Unit price': 'Einzelpreis',
    Discount: 'Rabatt',
    VAT: 'USt.',
    'Amount ({currency})': 'Betrag ({currency})',
    Rate: 'Satz',
    'Net ({currency})': 'Netto ({currency})',
    'VAT ({currency})': 'USt. ({currency})',
    'Total excl. VAT': 'Summe netto',
    'Total incl. VAT': 'Summe brutto',
    Settled: 'Bezahlt',
    'Amount due': 'Offener Betrag',
    'VAT breakdown': 'USt.-Aufstellung',
    'Page {page} of {pages}': 'Seite {page} von {pages}',
    'Not taxable': 'Nicht steuerbar',
    ' reverse charge': ' Reverse Charge',
    ' exempt': ' steuerfrei',
    ' incl.': ' inkl.',
    'Reverse charge: VAT to be accounted for by the recipient (Article 196, Council Directive 2006/112/EC)':
      'Steuerschuldnerschaft des Leistungsempfängers (Artikel 196 der Richtlinie 2006/112/EG)',
    'Exempt from VAT': 'Von der Umsatzsteuer befreit',
    'Not subject to VAT': 'Nicht steuerbar',
  },
  fr: {
    Invoice: 'Facture',
    'Credit note': 'Avoir',
    DRAFT: 'BROUILLON',
    'Draft {kind}': 'Brouillon : {kind}',
    'VAT ID {id}': 'N° TVA {id}',
    'Tax no. {id}': 'N° fiscal {id}',
    'Reg. {id}': 'Immatriculation {id}',
    'Supply date': 'Date de livraison',
    'Service period': 'Période de prestation',
    '{number} of {date}': '{number} du {date}',
    'Invoice number': 'Numéro de facture',
    'Credit note number': "Numéro d'avoir",
    Date: 'Date',
    'Due date': 'Échéance',
    Currency: 'Devise',
    'Credits invoice': 'Rectifie la facture',
    'Bill to': 'Facturé à',
    'Customer no. {id}': 'N° client {id}',
    'Please pay {amount} by {date}, quoting {number}.':
      'Veuillez payer {amount} avant le {date} en indiquant {number}.',
    'Please pay {amount} by {date}.': 'Veuillez payer {amount} avant le {date}.',
    'Please pay {amount}, quoting {number}.': 'Veuillez payer {amount} en indiquant {number}.',
    'Please pay {amount}.': 'Veuillez payer {amount}.',
    'Account holder {name}': 'Titulaire {name}',
    Payment: 'Paiement',
    Item: 'Désignation',
    Qty: 'Qté',
    'Unit price': 'Prix unitaire',
    Discount: 'Remise',
    VAT: 'TVA',
    'Amount ({currency})': 'Montant ({currency})',
    Rate: 'Taux',
    'Net ({currency})': 'HT ({currency})',
    'VAT ({currency})': 'TVA ({currency})',
    'Total excl. VAT': 'Total HT',
    'Total incl. VAT': 'Total TTC',
    Settled: 'Réglé',
    'Amount due': 'Montant dû',
    'VAT breakdown': 'Détail de la TVA',
    'Page {page} of {pages}': 'Page {page} sur {pages}',
    'Not taxable': 'Non soumis à la TVA',
    ' reverse charge': ' autoliquidation',
    ' exempt': ' exonéré',
    'Reverse charge: VAT to be accounted for by the recipient (Article 196, Council Directive 2006/112/EC)':
      'Autoliquidation : TVA due par le preneur (article 196 de la directive 2006/112/CE)',
    'Exempt from VAT': 'Exonération de TVA',
    'Not subject to VAT': 'Non soumis à la TVA',
    ' incl.': ' incl.',
  },
};

const LOCALES: Record<SellerLanguage, string> = { en: 'en', de: 'de-DE', fr: 'fr-FR' };

/** The words, numbers and dates of one document's language. */
export class PdfLocale {
  readonly language: SellerLanguage;
  readonly locale: string;
  private readonly quantityFormat: Intl.NumberFormat;
  private readonly percentFormat: Intl.NumberFormat;
  private readonly dateFormat: Intl.DateTimeFormat | null;

  constructor(language: SellerLanguage) {
    this.language = language;
    this.locale = LOCALES[language];
    this.quantityFormat = new Intl.NumberFormat(this.locale, { maximumFractionDigits: 6 });
    this.percentFormat = new Intl.NumberFormat(this.locale, {
      style: 'unit',
      unit: 'percent',
      maximumFractionDigits: 4,
    });
    this.dateFormat =
      language === 'en'
        ? null
        : new Intl.DateTimeFormat(this.locale, {
            day: '2-digit',
            month: '2-digit',
            year: 'numeric',
            timeZone: 'UTC',
          });
  }

  /** The text of `key` in this language, its {name} placeholders filled from `values`. */
  t(key: string, values: Record<string, string | number> = {}): string {
    const text = this.language === 'en' ? key : (WORDS[this.language][key] ?? key);
    return text.replace(/\{(\w+)\}/g, (whole, name: string) =>
      name in values ? String(values[name]) : whole,
    );
  }

  /** A calendar date (YYYY-MM-DD) as the language writes it; English keeps ISO. */
  date(date: string): string {
    return this.dateFormat ? this.dateFormat.format(new Date(`${date}T00:00:00Z`)) : date;
  }

  quantity(value: string): string {
    return this.quantityFormat.format(new Decimal(value).toFixed() as `${number}`);
  }

  percent(value: string): string {
    return this.percentFormat.format(new Decimal(value).toFixed() as `${number}`);
  }
}

/**
 * A tax note (reverse charge, exemption; BT-120 in the e-invoice) in the document's language with the
 * English alongside, so that a reader or tax office abroad reads it too; English documents print it once.
 */
export function taxNoteIn(language: SellerLanguage, english: string): string {
  const translated = new PdfLocale(language).t(english);
  return translated === english ? english : `${translated} / ${english}`;
}
