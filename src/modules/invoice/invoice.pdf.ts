import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { minorUnitDigits } from '../../money/currency.ts';
import { Decimal } from '../../money/decimal.ts';
import type { BillingAddress } from '../customer/customer.entity.ts';
import { totalDue } from './invoice.arithmetic.ts';
import type { Invoice, InvoiceItem } from './invoice.entity.ts';
import type { PrintableInvoice } from './invoice.reads.ts';

export const PDF_MEDIA_TYPE = 'application/pdf';

// DejaVu Sans covers Latin, Greek and Cyrillic: the PDF standard fonts stop at Windows-1252, which
// would drop letters such as "ł" or "ő" from customer names and addresses.
const resolveFont = createRequire(import.meta.url).resolve;

async function loadKit() {
  const { default: PDFDocument } = await import('pdfkit');
  const [regular, bold] = await Promise.all([
    readFile(resolveFont('dejavu-fonts-ttf/ttf/DejaVuSans.ttf')),
    readFile(resolveFont('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf')),
  ]);
  return { PDFDocument, regular, bold };
}

let kit: ReturnType<typeof loadKit> | undefined;

/** pdfkit and the fonts load with the first PDF: about 11 MB that a process rendering none never holds. */
function pdfKit(): ReturnType<typeof loadKit> {
  kit ??= loadKit().catch((error: unknown) => {
    kit = undefined;
    throw error;
  });
  return kit;
}

const LOCALE = 'en';
const INK = '#1a1a1a';
const MUTED = '#6b6b6b';
const RULE = '#c8c8c8';
const MARGIN = 50;
const FOOTER_HEIGHT = 30;

type Column = { title: string; width: number; align: 'left' | 'right' };

const LINE_COLUMNS = {
  item: { title: 'Item', width: 180, align: 'left' },
  quantity: { title: 'Qty', width: 45, align: 'right' },
  unitAmount: { title: 'Unit price', width: 75, align: 'right' },
  discount: { title: 'Discount', width: 65, align: 'right' },
  taxRate: { title: 'VAT', width: 40, align: 'right' },
  amount: { title: 'Amount', width: 90, align: 'right' },
} satisfies Record<string, Column>;

const CELL_GAP = 6;
const TABLE_HEAD_HEIGHT = 22;

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

  constructor(currency: string) {
    this.currency = currency;
    this.digits = minorUnitDigits(currency);
    const fraction = { minimumFractionDigits: this.digits, maximumFractionDigits: this.digits };
    this.plain = new Intl.NumberFormat(LOCALE, fraction);
    this.withCurrency = new Intl.NumberFormat(LOCALE, { style: 'currency', currency, ...fraction });
    // Unit amounts may hold fractions of a minor unit, up to the 6 decimals they are stored with.
    this.precise = new Intl.NumberFormat(LOCALE, {
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

const quantityFormat = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 6 });
const percentFormat = new Intl.NumberFormat(LOCALE, {
  style: 'unit',
  unit: 'percent',
  maximumFractionDigits: 4,
});

const percent = (value: string): string => percentFormat.format(new Decimal(value).toFixed() as `${number}`);

function discountText(item: InvoiceItem, money: MoneyFormat): string {
  const parts: string[] = [];
  if (!new Decimal(item.discountPercentage).isZero()) parts.push(percent(item.discountPercentage));
  if (!new Decimal(item.discountAmount).isZero()) parts.push(money.unitAmount(item.discountAmount));
  return parts.join(' + ');
}

function periodText(item: InvoiceItem): string | null {
  if (!item.periodStart && !item.periodEnd) return null;
  return `${item.periodStart ?? '…'} – ${item.periodEnd ?? '…'}`;
}

function addressLines(address: BillingAddress): string[] {
  const cityLine = [address.postalCode, address.city].filter(Boolean).join(' ');
  return [address.street1, address.street2, cityLine, address.county, address.state, address.country].filter(
    (line): line is string => Boolean(line),
  );
}

const kindOf = (invoice: Invoice): string => (invoice.type === 'credit_note' ? 'Credit note' : 'Invoice');

type TaxGroup = { label: string; net: bigint; tax: bigint };

/** Net and VAT per rate, lowest rate first; lines without a tax code form their own group, last. */
function taxBreakdown(items: readonly InvoiceItem[]): TaxGroup[] {
  const byRate = new Map<string, { rate: Decimal | null; net: bigint; tax: bigint }>();
  for (const item of items) {
    const rate = item.taxRate == null ? null : new Decimal(item.taxRate);
    const key = rate ? rate.toFixed() : 'none';
    const group = byRate.get(key) ?? { rate, net: 0n, tax: 0n };
    group.net += BigInt(item.amount);
    group.tax += BigInt(item.taxAmount);
    byRate.set(key, group);
  }
  return [...byRate.values()]
    .sort((a, b) => (a.rate && b.rate ? a.rate.comparedTo(b.rate) : a.rate ? -1 : 1))
    .map(({ rate, net, tax }) => ({ label: rate ? percent(rate.toFixed()) : 'Not taxable', net, tax }));
}

type Line = { text: string; bold?: boolean; size?: number; color?: string };
type Row = Record<keyof typeof LINE_COLUMNS, Line[]>;

const SMALL = { size: 7.5, color: MUTED };

/** Lays out one invoice on A4 pages: header blocks, line table (repeated head on each page), tax and totals. */
class InvoiceLayout {
  private readonly doc: PDFKit.PDFDocument;
  private readonly view: PrintableInvoice;
  private readonly money: MoneyFormat;
  private y = MARGIN;

  constructor(doc: PDFKit.PDFDocument, view: PrintableInvoice) {
    this.doc = doc;
    this.view = view;
    this.money = new MoneyFormat(view.invoice.currency);
  }

  private get left(): number {
    return MARGIN;
  }

  private get right(): number {
    return this.doc.page.width - MARGIN;
  }

  private get number(): string {
    return this.view.invoice.handle ?? 'DRAFT';
  }

  private get title(): string {
    return kindOf(this.view.invoice);
  }

  render(): void {
    this.newPage();
    this.header();
    this.lines();
    this.summary();
    this.footers();
  }

  private newPage(): void {
    this.doc.addPage();
    this.y = MARGIN;
  }

  /** Writes text at (x, y) and answers its height. */
  private text(
    value: string,
    x: number,
    y: number,
    options: PDFKit.Mixins.TextOptions & Omit<Line, 'text'> = {},
  ) {
    const { bold, size = 9, color = INK, ...textOptions } = options;
    this.doc
      .font(bold ? 'bold' : 'regular')
      .fontSize(size)
      .fillColor(color);
    this.doc.text(value, x, y, textOptions);
    return this.doc.heightOfString(value, textOptions);
  }

  private rule(y: number, from = this.left, to = this.right, color = RULE): void {
    this.doc.moveTo(from, y).lineTo(to, y).lineWidth(0.6).strokeColor(color).stroke();
  }

  private header(): void {
    const { invoice, customer, seller, creditedInvoiceHandle } = this.view;
    const half = (this.right - this.left) / 2;
    const sellerHeight = this.text(seller.name, this.left, this.y, {
      bold: true,
      size: 16,
      width: half - 10,
    });
    this.text(this.title, this.left + half, this.y, { bold: true, size: 20, width: half, align: 'right' });

    const meta: [string, string | null][] = [
      [`${this.title} number`, this.number],
      ['Date', invoice.date],
      ['Due date', invoice.dueDate ?? null],
      ['Currency', invoice.currency],
      ['Credits invoice', creditedInvoiceHandle],
    ];
    let metaY = this.y + 34;
    for (const [label, value] of meta) {
      if (value === null) continue;
      this.text(label, this.left + half, metaY, { color: MUTED, width: half / 2 });
      this.text(value, this.left + half + half / 2, metaY, { bold: true, width: half / 2, align: 'right' });
      metaY += 14;
    }

    let customerY = this.y + Math.max(sellerHeight + 20, 34);
    const width = half - 10;
    customerY += this.text('Bill to', this.left, customerY, { ...SMALL, width }) + 2;
    customerY += this.text(customer.name, this.left, customerY, { bold: true, size: 11, width });
    if (customer.handle) {
      customerY += this.text(`Customer no. ${customer.handle}`, this.left, customerY, {
        color: MUTED,
        width,
      });
    }
    for (const line of addressLines(customer.billingAddress)) {
      customerY += this.text(line, this.left, customerY, { width });
    }
    this.y = Math.max(metaY, customerY) + 18;

    if (invoice.memo) {
      this.y += this.text(invoice.memo, this.left, this.y, { width: this.right - this.left }) + 14;
    }
  }

  /** Laid over the finished page, faint enough to read the figures through it. */
  private watermark(): void {
    const { doc } = this;
    doc.save();
    doc.rotate(-35, { origin: [doc.page.width / 2, doc.page.height / 2] });
    doc.fillOpacity(0.07);
    this.text('DRAFT', 0, doc.page.height / 2 - 50, {
      bold: true,
      size: 110,
      width: doc.page.width,
      align: 'center',
    });
    doc.restore();
  }

  private columns(): [keyof typeof LINE_COLUMNS, Column, number][] {
    let x = this.left;
    return (Object.entries(LINE_COLUMNS) as [keyof typeof LINE_COLUMNS, Column][]).map(([key, column]) => {
      const start = x;
      x += column.width;
      return [key, column, start];
    });
  }

  private rowHeight(row: Row): number {
    return Math.max(
      ...this.columns().map(([key, column]) =>
        row[key].reduce((height, line) => {
          this.doc.font(line.bold ? 'bold' : 'regular').fontSize(line.size ?? 9);
          return height + this.doc.heightOfString(line.text, { width: column.width - CELL_GAP });
        }, 0),
      ),
    );
  }

  private lastPage(): number {
    const { start, count } = this.doc.bufferedPageRange();
    return start + count - 1;
  }

  /**
   * Draws a row at `y`. A description too long for one page flows on to the next: the other cells
   * stay beside where it began, and the table goes on below where it ended.
   */
  private row(row: Row): void {
    const { doc } = this;
    const page = this.lastPage();
    let bottom = this.y;
    let flowedTo: number | null = null;
    for (const [key, column, x] of this.columns()) {
      const width = column.width - CELL_GAP;
      const cellX = column.align === 'right' ? x + CELL_GAP : x;
      let y = this.y;
      for (const { text, ...style } of row[key]) {
        this.text(text, cellX, y, { ...style, width, align: column.align });
        y = doc.y;
      }
      if (flowedTo === null && this.lastPage() !== page) {
        flowedTo = y;
        doc.switchToPage(page);
      } else {
        bottom = Math.max(bottom, y);
      }
    }
    if (flowedTo !== null) doc.switchToPage(this.lastPage());
    this.y = flowedTo ?? bottom;
  }

  private tableHead(): void {
    const head = Object.fromEntries(
      Object.entries(LINE_COLUMNS).map(([key, column]) => [
        key,
        [{ text: key === 'amount' ? `${column.title} (${this.money.currency})` : column.title, bold: true }],
      ]),
    ) as Row;
    this.row(head);
    this.y += 4;
    this.rule(this.y, this.left, this.right, INK);
    this.y += 6;
  }

  private lines(): void {
    this.tableHead();
    for (const item of this.view.items) {
      const period = periodText(item);
      const row: Row = {
        item: [
          { text: item.title },
          ...(item.description ? [{ text: item.description, ...SMALL }] : []),
          ...(period ? [{ text: period, ...SMALL }] : []),
        ],
        quantity: [{ text: quantityFormat.format(new Decimal(item.quantity).toFixed() as `${number}`) }],
        unitAmount: [{ text: this.money.unitAmount(item.unitAmount) }],
        discount: [{ text: discountText(item, this.money) }],
        taxRate: [{ text: item.taxRate == null ? '–' : percent(item.taxRate) }],
        amount: [{ text: this.money.amount(item.amount) }],
      };
      const height = this.rowHeight(row);
      // A row taller than a whole page starts where it is and flows on: a fresh page would not hold it either.
      if (
        this.y + height > this.doc.page.maxY() &&
        MARGIN + TABLE_HEAD_HEIGHT + height <= this.doc.page.maxY()
      ) {
        this.newPage();
        this.tableHead();
      }
      this.row(row);
      this.y += 3;
      this.rule(this.y);
      this.y += 6;
    }
  }

  private summary(): void {
    const { invoice } = this.view;
    const groups = taxBreakdown(this.view.items);
    const totals: [string, string, boolean][] = [
      ['Total excl. VAT', this.money.total(invoice.totalExclVat), false],
      ['VAT', this.money.total(invoice.totalVat), false],
      ['Total incl. VAT', this.money.total(invoice.totalInclVat), true],
      ['Settled', this.money.total(invoice.settledAmount), false],
      ['Amount due', this.money.total(totalDue(invoice.totalInclVat, invoice.settledAmount)), true],
    ];
    const height = 12 + Math.max(18 + 14 * (groups.length + 1), 16 * totals.length);
    if (this.y + height > this.doc.page.maxY()) this.newPage();
    this.y += 12;
    const top = this.y;

    const taxColumns = [120, 75, 75];
    let y = top + this.text('VAT breakdown', this.left, top, { bold: true }) + 4;
    const taxRow = (cells: string[], style: Omit<Line, 'text'> = {}) => {
      let x = this.left;
      cells.forEach((cell, i) => {
        const width = (taxColumns[i] as number) - CELL_GAP;
        const align = i === 0 ? 'left' : 'right';
        this.text(cell, i === 0 ? x : x + CELL_GAP, y, { ...style, width, align });
        x += taxColumns[i] as number;
      });
      y += 14;
    };
    taxRow(['Rate', `Net (${this.money.currency})`, `VAT (${this.money.currency})`], { color: MUTED });
    for (const group of groups)
      taxRow([group.label, this.money.amount(group.net), this.money.amount(group.tax)]);

    const totalsX = this.right - 210;
    let totalsY = top;
    for (const [label, value, strong] of totals) {
      if (strong) this.rule(totalsY - 3, totalsX);
      this.text(label, totalsX, totalsY, { bold: strong, width: 100 });
      this.text(value, totalsX + 100, totalsY, { bold: strong, width: 110, align: 'right' });
      totalsY += 16;
    }
    this.y = Math.max(y, totalsY);
  }

  private footers(): void {
    const { doc } = this;
    const range = doc.bufferedPageRange();
    for (let i = range.start; i < range.start + range.count; i++) {
      doc.switchToPage(i);
      const y = doc.page.height - MARGIN - 10;
      // Text below the bottom margin would start a new page: the footer lives in that margin.
      const margin = doc.page.margins.bottom;
      doc.page.margins.bottom = 0;
      this.rule(y - 6);
      this.text(`${this.view.seller.name} · ${this.title} ${this.number}`, this.left, y, {
        ...SMALL,
        width: 300,
      });
      const pageText = `Page ${i - range.start + 1} of ${range.count}`;
      this.text(pageText, this.right - 150, y, { ...SMALL, width: 150, align: 'right' });
      doc.page.margins.bottom = margin;
      if (!this.view.invoice.handle) this.watermark();
    }
  }
}

/** The number, or `draft-<id>`, in the characters every file system takes (a prefix may hold "/"). */
export function pdfFileName(invoice: Invoice): string {
  return `${invoice.handle ? invoice.handle.replace(/[^A-Za-z0-9._-]/g, '-') : `draft-${invoice.id}`}.pdf`;
}

/** Renders the invoice as an A4 PDF; the fonts are embedded, so it looks the same everywhere. */
export async function renderInvoicePdf(view: PrintableInvoice): Promise<Uint8Array> {
  const { PDFDocument, regular, bold } = await pdfKit();
  const kind = kindOf(view.invoice);
  const title = view.invoice.handle ? `${kind} ${view.invoice.handle}` : `Draft ${kind.toLowerCase()}`;
  const doc = new PDFDocument({
    size: 'A4',
    margins: { top: MARGIN, left: MARGIN, right: MARGIN, bottom: MARGIN + FOOTER_HEIGHT },
    autoFirstPage: false,
    bufferPages: true,
    lang: 'en',
    displayTitle: true,
    info: { Title: title, Author: view.seller.name, Subject: view.customer.name },
  });
  doc.registerFont('regular', regular);
  doc.registerFont('bold', bold);
  const chunks: Uint8Array[] = [];
  const done = new Promise<Uint8Array>((resolve, reject) => {
    doc.on('data', (chunk: Uint8Array) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  new InvoiceLayout(doc, view).render();
  doc.end();
  return done;
}
