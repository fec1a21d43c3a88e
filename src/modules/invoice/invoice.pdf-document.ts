import type { Content, CustomTableLayout, TableCell, TDocumentDefinitions } from 'pdfmake/interfaces.js';
import { minorUnitDigits } from '../../money/currency.ts';
import { Decimal } from '../../money/decimal.ts';
import type { BillingAddress } from '../customer/customer.entity.ts';
import type { InvoiceSeller } from '../seller/seller.entity.ts';
import { taxNoteOf } from '../tax/tax-policy.ts';
import type { Invoice, InvoiceCustomer, InvoiceItem } from './invoice.entity.ts';
import { PdfLocale, taxNoteIn } from './invoice.pdf-labels.ts';
import { servicePeriod, shownPeriod } from './invoice.periods.ts';
import type { PrintableInvoice } from './invoice.reads.ts';
import { type TaxBreakdownRow, taxBreakdown } from './invoice.tax.ts';
import { amountDue } from './invoice-collection.ts';

const INVOICE_FIELDS = [
  'handle',
  'type',
  'currency',
  'date',
  'dueDate',
  'memo',
  'totalExclVat',
  'totalVat',
  'totalInclVat',
  'settledAmount',
  'taxExempt',
  'voidedAt',
] as const;
const CUSTOMER_FIELDS = ['name', 'handle', 'billingAddress', 'companyName', 'taxIds'] as const;
const ITEM_FIELDS = [
  'title',
  'description',
  'periodStart',
  'periodEnd',
  'quantity',
  'unitAmount',
  'discountPercentage',
  'discountAmount',
  'taxCode',
  'taxRate',
  'taxBehavior',
  'amount',
  'taxAmount',
] as const;

/** What the PDF prints, as plain data: it crosses to the rendering worker by structured clone. */
export type InvoicePdfData = {
  invoice: Pick<Invoice, (typeof INVOICE_FIELDS)[number]>;
  customer: Pick<InvoiceCustomer, (typeof CUSTOMER_FIELDS)[number]>;
  items: Pick<InvoiceItem, (typeof ITEM_FIELDS)[number]>[];
  seller: InvoiceSeller;
  /** The logo as a data URL, when the seller has one. */
  logo: string | null;
  creditedInvoiceHandle: string | null;
  creditedInvoiceDate: string | null;
};

const pick = <T, K extends keyof T>(from: T, keys: readonly K[]): Pick<T, K> =>
  Object.fromEntries(keys.map((key) => [key, from[key]])) as Pick<T, K>;

/**
 * The fields the document prints, copied off the entities: those carry references and helpers that
 * structured cloning would refuse, and most of their fields the PDF never shows.
 */
export function invoicePdfData(view: PrintableInvoice): InvoicePdfData {
  return {
    invoice: pick(view.invoice, INVOICE_FIELDS),
    customer: pick(view.customer, CUSTOMER_FIELDS),
    items: view.items.map((item) => pick(item, ITEM_FIELDS)),
    seller: { ...view.seller },
    logo: view.logo ? `data:${view.logo.mediaType};base64,${view.logo.data}` : null,
    creditedInvoiceHandle: view.creditedInvoiceHandle,
    creditedInvoiceDate: view.creditedInvoiceDate,
  };
}

type PdfItem = InvoicePdfData['items'][number];

/** The family name the worker registers the DejaVu Sans files under. */
export const FONT = 'DejaVuSans';

const INK = '#1a1a1a';
const MUTED = '#6b6b6b';
const RULE = '#c8c8c8';
const MARGIN = 50;
const FOOTER_HEIGHT = 30;
const CELL_GAP = 6;
const SMALL = { fontSize: 7.5, color: MUTED };

/**
 * Money comes in as integers of minor units (or exact decimal strings of them, for unit amounts) and
 * goes to Intl as an exact decimal string of major units: no binary floating point on the way.
 */
class MoneyFormat {
  readonly currency: string;
  private readonly digits: number;
  private readonly plain: Intl.NumberFormat;
  private readonly withCurrency: Intl.NumberFormat;
  private readonly precise: Intl.NumberFormat;

  constructor(currency: string, locale: string) {
    this.currency = currency;
    this.digits = minorUnitDigits(currency);
    const fraction = { minimumFractionDigits: this.digits, maximumFractionDigits: this.digits };
    this.plain = new Intl.NumberFormat(locale, fraction);
    this.withCurrency = new Intl.NumberFormat(locale, { style: 'currency', currency, ...fraction });
    // Unit amounts may hold fractions of a minor unit, up to the 6 decimals they are stored with.
    this.precise = new Intl.NumberFormat(locale, {
      minimumFractionDigits: this.digits,
      maximumFractionDigits: this.digits + 6,
    });
  }

  private major(minor: string | number | bigint): Intl.StringNumericLiteral {
    return new Decimal(minor.toString()).dividedBy(new Decimal(10).pow(this.digits)).toFixed() as `${number}`;
  }

  amount(minor: number | bigint): string {
    return this.plain.format(this.major(minor));
  }

  total(minor: number | bigint): string {
    return this.withCurrency.format(this.major(minor));
  }

  unitAmount(minor: string): string {
    return this.precise.format(this.major(minor));
  }
}

function discountText(item: PdfItem, money: MoneyFormat, l: PdfLocale): string {
  const parts: string[] = [];
  if (!new Decimal(item.discountPercentage).isZero()) parts.push(l.percent(item.discountPercentage));
  if (!new Decimal(item.discountAmount).isZero()) parts.push(money.unitAmount(item.discountAmount));
  return parts.join(' + ');
}

/** The line's period, its last day covered (the API's end is the first day not covered). */
function periodText(item: PdfItem, l: PdfLocale): string | null {
  const period = shownPeriod(item);
  return period
    ? `${period.start ? l.date(period.start) : '…'} – ${period.end ? l.date(period.end) : '…'}`
    : null;
}

function addressLines(address: BillingAddress): string[] {
  const cityLine = [address.postalCode, address.city].filter(Boolean).join(' ');
  return [address.street1, address.street2, cityLine, address.county, address.state, address.country].filter(
    (line): line is string => Boolean(line),
  );
}

const joined = (parts: (string | null)[]): string => parts.filter(Boolean).join(' · ');

/** An IBAN as people read it: groups of four. */
const groupsOf4 = (iban: string): string => iban.replace(/(.{4})(?=.)/g, '$1 ');

export const kindOf = (invoice: Pick<Invoice, 'type'>): string =>
  invoice.type === 'credit_note' ? 'Credit note' : 'Invoice';

const TAX_ROW_SUFFIX: Partial<Record<TaxBreakdownRow['category'], string>> = {
  AE: ' reverse charge',
  E: ' exempt',
};

/** How the VAT breakdown names a row (the rows are the API's `taxBreakdown`). */
function taxRowLabel(row: TaxBreakdownRow, l: PdfLocale): string {
  if (row.taxRate === null) return l.t('Not taxable');
  const inclusive = row.taxBehavior === 'inclusive' ? l.t(' incl.') : '';
  const suffix = TAX_ROW_SUFFIX[row.category];
  return `${l.percent(row.taxRate)}${inclusive}${suffix ? l.t(suffix) : ''}`;
}

/** No vertical lines; thin horizontal rules under each row, the one under the head in ink. */
const linesLayout: CustomTableLayout = {
  hLineWidth: (i) => (i === 0 ? 0 : 0.6),
  hLineColor: (i) => (i === 1 ? INK : RULE),
  vLineWidth: () => 0,
  paddingLeft: (i) => (i === 0 ? 0 : CELL_GAP),
  paddingRight: (i) => (i === 0 ? CELL_GAP : 0),
  paddingTop: (i) => (i === 0 ? 0 : 6),
  paddingBottom: (i) => (i === 0 ? 4 : 3),
};

const plainLayout: CustomTableLayout = {
  hLineWidth: () => 0,
  vLineWidth: () => 0,
  paddingLeft: (i) => (i === 0 ? 0 : CELL_GAP),
  paddingRight: (i) => (i === 0 ? CELL_GAP : 0),
  paddingTop: () => 1,
  paddingBottom: () => 2,
};

/** Builds the document: header blocks, the line table (its head repeated on each page), tax and totals. */
export class InvoicePdfDocument {
  private readonly data: InvoicePdfData;
  private readonly money: MoneyFormat;
  private readonly l: PdfLocale;

  constructor(data: InvoicePdfData) {
    this.data = data;
    this.l = new PdfLocale(data.seller.language ?? 'en');
    this.money = new MoneyFormat(data.invoice.currency, this.l.locale);
  }

  private get number(): string {
    return this.data.invoice.handle ?? this.l.t('DRAFT');
  }

  private get title(): string {
    return this.l.t(kindOf(this.data.invoice));
  }

  definition(): TDocumentDefinitions {
    const { invoice, seller, customer } = this.data;
    const documentTitle = invoice.handle
      ? `${this.title} ${invoice.handle}`
      : this.l.t('Draft {kind}', { kind: this.l.language === 'en' ? this.title.toLowerCase() : this.title });
    return {
      pageSize: 'A4',
      pageMargins: [MARGIN, MARGIN, MARGIN, MARGIN + this.footerHeight()],
      language: this.l.language,
      displayTitle: true,
      info: { title: documentTitle, author: seller.legalName, subject: customer.name },
      defaultStyle: { font: FONT, fontSize: 9, color: INK },
      content: [...this.header(), this.lines(), this.summary(), ...this.payment()],
      footer: (page, pages) => this.footer(page, pages),
      ...(invoice.handle
        ? {}
        : {
            watermark: {
              text: this.l.t('DRAFT'),
              bold: true,
              fontSize: 110,
              opacity: 0.07,
              color: INK,
              angle: -35,
            },
          }),
    };
  }

  /** The seller's details under its name: address, registrations, contact; one line each. */
  private sellerLines(): string[] {
    const { seller } = this.data;
    const address = seller.address ? addressLines(seller.address).join(' · ') : '';
    const registrations = [
      seller.vatId ? this.l.t('VAT ID {id}', { id: seller.vatId }) : null,
      seller.taxNumber ? this.l.t('Tax no. {id}', { id: seller.taxNumber }) : null,
      seller.companyId ? this.l.t('Reg. {id}', { id: seller.companyId }) : null,
    ];
    const contact = [seller.email, seller.phone];
    return [address, joined(registrations), joined(contact)].filter(Boolean);
  }

  /** The dates art. 226 asks for besides the issue date: the service period, or the date of supply. */
  private supply(): [string, string] {
    const period = servicePeriod(this.data.items);
    const l = this.l;
    if (!period) return [l.t('Supply date'), l.date(this.data.invoice.date)];
    return [
      l.t('Service period'),
      `${period.start ? l.date(period.start) : '…'} – ${period.end ? l.date(period.end) : '…'}`,
    ];
  }

  private header(): Content[] {
    const { invoice, customer, seller, creditedInvoiceHandle, creditedInvoiceDate, logo } = this.data;
    const credits = creditedInvoiceHandle
      ? creditedInvoiceDate
        ? this.l.t('{number} of {date}', {
            number: creditedInvoiceHandle,
            date: this.l.date(creditedInvoiceDate),
          })
        : creditedInvoiceHandle
      : null;
    const meta: [string, string | null][] = [
      [this.l.t(`${kindOf(invoice)} number`), this.number],
      [this.l.t('Date'), this.l.date(invoice.date)],
      this.supply(),
      [this.l.t('Due date'), invoice.dueDate ? this.l.date(invoice.dueDate) : null],
      [this.l.t('Currency'), invoice.currency],
      [this.l.t('Credits invoice'), credits],
    ];
    const buyerVatIds = (customer.taxIds ?? []).map((taxId) => ({
      text: this.l.t('VAT ID {id}', { id: taxId.value }),
    }));
    const billTo: Content[] = [
      { text: this.l.t('Bill to'), ...SMALL, margin: [0, 0, 0, 2] },
      ...(customer.companyName ? [{ text: customer.companyName, bold: true, fontSize: 11 }] : []),
      { text: customer.name, ...(customer.companyName ? {} : { bold: true, fontSize: 11 }) },
      ...(customer.handle
        ? [{ text: this.l.t('Customer no. {id}', { id: customer.handle }), color: MUTED }]
        : []),
      ...addressLines(customer.billingAddress).map((line) => ({ text: line })),
      ...buyerVatIds,
    ];
    const metaRows: TableCell[][] = meta
      .filter((row): row is [string, string] => row[1] !== null)
      .map(([label, value]) => [
        { text: label, color: MUTED },
        { text: value, bold: true, alignment: 'right' },
      ]);
    return [
      ...(logo ? [{ image: logo, fit: [140, 50], margin: [0, 0, 0, 8] } satisfies Content] : []),
      {
        columns: [
          { text: seller.legalName, bold: true, fontSize: 16, width: '*', margin: [0, 0, 10, 0] },
          { text: this.title, bold: true, fontSize: 20, width: '*', alignment: 'right' },
        ],
      },
      ...this.sellerLines().map((text) => ({ text, ...SMALL }) satisfies Content),
      {
        columns: [
          { stack: billTo, width: '*', margin: [0, 15, 10, 0] },
          {
            width: '*',
            margin: [0, 10, 0, 0],
            table: { widths: ['auto', '*'], body: metaRows },
            layout: plainLayout,
          },
        ],
        margin: [0, 0, 0, 18],
      },
      ...(invoice.memo ? [{ text: invoice.memo, margin: [0, 0, 0, 14] } satisfies Content] : []),
    ];
  }

  /** How to pay: the amount due and by when, the bank account and the seller's instructions. */
  private payment(): Content[] {
    const { invoice, seller } = this.data;
    const due = amountDue(invoice);
    const lines: string[] = [];
    if (invoice.type === 'invoice' && due > 0 && !invoice.voidedAt) {
      lines.push(
        this.l.t(
          `Please pay {amount}${invoice.dueDate ? ' by {date}' : ''}${invoice.handle ? ', quoting {number}' : ''}.`,
          {
            amount: this.money.total(due),
            date: invoice.dueDate ? this.l.date(invoice.dueDate) : '',
            number: invoice.handle ?? '',
          },
        ),
      );
    }
    if (seller.iban)
      lines.push(
        this.l.t('Account holder {name}', { name: seller.legalName }),
        `IBAN ${groupsOf4(seller.iban)}`,
      );
    if (seller.bic) lines.push(`BIC ${seller.bic}`);
    if (seller.paymentInstructions) lines.push(seller.paymentInstructions);
    if (lines.length === 0) return [];
    return [
      {
        unbreakable: true,
        margin: [0, 16, 0, 0],
        stack: [
          { text: this.l.t('Payment'), bold: true, margin: [0, 0, 0, 4] },
          ...lines.map((text) => ({ text })),
        ],
      },
    ];
  }

  private lines(): Content {
    const { money } = this;
    const head: TableCell[] = [
      { text: this.l.t('Item') },
      { text: this.l.t('Qty') },
      { text: this.l.t('Unit price') },
      { text: this.l.t('Discount') },
      { text: this.l.t('VAT') },
      { text: this.l.t('Amount ({currency})', { currency: money.currency }) },
    ].map((cell, i) => ({ ...cell, bold: true, alignment: i === 0 ? 'left' : 'right' }));
    const rows = this.data.items.map((item): TableCell[] => {
      const period = periodText(item, this.l);
      return [
        {
          stack: [
            { text: item.title },
            ...(item.description ? [{ text: item.description, ...SMALL }] : []),
            ...(period ? [{ text: period, ...SMALL }] : []),
          ],
        },
        {
          text: this.l.quantity(item.quantity),
          alignment: 'right',
        },
        { text: money.unitAmount(item.unitAmount), alignment: 'right' },
        { text: discountText(item, money, this.l), alignment: 'right' },
        { text: item.taxRate == null ? '–' : this.l.percent(item.taxRate), alignment: 'right' },
        { text: money.amount(item.amount), alignment: 'right' },
      ];
    });
    return {
      table: { headerRows: 1, widths: [174, 39, 69, 59, 34, 84], body: [head, ...rows] },
      layout: linesLayout,
    };
  }

  private summary(): Content {
    const { invoice } = this.data;
    const { money } = this;
    const groups = taxBreakdown(this.data.items, invoice.taxExempt);
    const english = taxNoteOf(invoice.taxExempt);
    const note = english ? taxNoteIn(this.l.language, english) : null;
    const taxRows: TableCell[][] = [
      [
        this.l.t('Rate'),
        this.l.t('Net ({currency})', { currency: money.currency }),
        this.l.t('VAT ({currency})', { currency: money.currency }),
      ].map((text, i) => ({
        text,
        color: MUTED,
        alignment: i === 0 ? 'left' : 'right',
      })),
      ...groups.map((group): TableCell[] => [
        { text: taxRowLabel(group, this.l) },
        { text: money.amount(group.taxableAmount), alignment: 'right' },
        { text: money.amount(group.taxAmount), alignment: 'right' },
      ]),
    ];
    const totals: [string, string, boolean][] = [
      [this.l.t('Total excl. VAT'), money.total(invoice.totalExclVat), false],
      [this.l.t('VAT'), money.total(invoice.totalVat), false],
      [this.l.t('Total incl. VAT'), money.total(invoice.totalInclVat), true],
      [this.l.t('Settled'), money.total(invoice.settledAmount), false],
      [this.l.t('Amount due'), money.total(amountDue(invoice)), true],
    ];
    const totalRows = totals.map(([label, value, bold]): TableCell[] => [
      { text: label, bold },
      { text: value, bold, alignment: 'right' },
    ]);
    return {
      // Tax and totals stay together: on the last page, or on a page of their own after it.
      unbreakable: true,
      margin: [0, 12, 0, 0],
      columns: [
        {
          width: '*',
          stack: [
            { text: this.l.t('VAT breakdown'), bold: true, margin: [0, 0, 0, 4] },
            { table: { widths: [114, 69, 69], body: taxRows }, layout: plainLayout },
            ...(note ? [{ text: note, ...SMALL, margin: [0, 6, 0, 0] } satisfies Content] : []),
          ],
        },
        {
          width: 210,
          table: { widths: [94, 104], body: totalRows },
          layout: {
            ...plainLayout,
            hLineWidth: (i) => (totals[i]?.[2] ? 0.6 : 0),
            hLineColor: () => RULE,
            paddingTop: () => 2,
            paddingBottom: () => 3,
          },
        },
      ],
    };
  }

  /** Room for the page footer: its rule and page line, and the seller's footer text when there is one. */
  private footerHeight(): number {
    const text = this.data.seller.footer;
    if (!text) return FOOTER_HEIGHT;
    const lines = text.split('\n').reduce((sum, line) => sum + Math.max(1, Math.ceil(line.length / 110)), 0);
    return FOOTER_HEIGHT + lines * 9.5;
  }

  private footer(page: number, pages: number): Content {
    const { seller } = this.data;
    return {
      margin: [MARGIN, 14, MARGIN, 0],
      stack: [
        { canvas: [{ type: 'line', x1: 0, y1: 0, x2: 495, y2: 0, lineWidth: 0.6, lineColor: RULE }] },
        ...(seller.footer ? [{ text: seller.footer, ...SMALL, margin: [0, 5, 0, 0] } satisfies Content] : []),
        {
          margin: [0, 5, 0, 0],
          columns: [
            { text: `${seller.legalName} · ${this.title} ${this.number}`, ...SMALL, width: 300 },
            {
              text: this.l.t('Page {page} of {pages}', { page, pages }),
              ...SMALL,
              width: '*',
              alignment: 'right',
            },
          ],
        },
      ],
    };
  }
}
