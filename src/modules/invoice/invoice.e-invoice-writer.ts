/**
 * The library side of the e-invoices: @e-invoice-eu/core writes the XML, and the Factur-X PDF, from
 * the UBL-shaped model invoice.e-invoice.ts builds. It runs on the render workers (invoice.pdf.ts),
 * so it imports nothing of the service: its input crosses to the worker by structured clone.
 */

/** The library's formats the service writes. */
export type LibraryFormat = 'UBL' | 'CII' | 'XRECHNUNG-UBL';

/** The invoice a credit note corrects (BG-3), which the library leaves out of CII (see below). */
export type PrecedingInvoice = { handle: string; date: string | null };

/** What a worker needs to write one e-invoice: plain data only. */
export type EInvoiceTask = {
  model: Record<string, unknown>;
  lang: string;
  preceding: PrecedingInvoice | null;
};

/** The Factur-X profile written into the PDF: EN 16931 ("Comfort" in ZUGFeRD), the full EN 16931 data set. */
export const FACTUR_X_FORMAT = 'Factur-X-EN16931';

/** The embedded file's name the Factur-X and ZUGFeRD 2 specifications require for this profile. */
export const FACTUR_X_FILE_NAME = 'factur-x.xml';

const QUIET = { log: () => {}, warn: () => {}, error: () => {} };

type Library = typeof import('@e-invoice-eu/core');
let library: Promise<Library> | undefined;

/** The library is large: it loads with the first e-invoice a worker writes, not with the worker. */
const load = (): Promise<Library> => {
  library ??= import('@e-invoice-eu/core');
  return library;
};

/** A format writer as far as the Factur-X hook below reaches into it (a method the library keeps private). */
type FacturXFormatter = {
  attachFacturX(pdf: unknown, options: unknown, xml: string): Promise<void>;
};

/**
 * Fills the format's defaults and writes the document: the steps the library's InvoiceService takes,
 * less its JSON schema check of the model. That check compiles the library's large schema again for
 * every document (about 0.3 s of CPU, several seconds on a loaded machine); the model is the
 * service's own, and the tests run the official EN 16931 rules over what it becomes.
 */
async function generate(
  task: EInvoiceTask,
  format: string,
  options: {
    pdf?: { buffer: Uint8Array; filename: string; mimetype: string };
  } = {},
  prepare: (formatter: unknown) => void = () => {},
): Promise<string | Uint8Array> {
  const { FormatFactoryService } = await load();
  const factory = new FormatFactoryService();
  const formatter = factory.createFormatService(format, QUIET);
  const invoice = structuredClone(task.model);
  formatter.fillInvoiceDefaults(invoice as never);
  prepare(formatter);
  return formatter.generate(invoice as never, {
    format: factory.normalizeFormat(format),
    lang: task.lang,
    noWarnings: true,
    ...options,
  });
}

/** Writes the model in one of the XML syntaxes. */
export async function writeEInvoice(task: EInvoiceTask & { format: LibraryFormat }): Promise<string> {
  const xml = await generate(task, task.format);
  const text = typeof xml === 'string' ? xml : new TextDecoder().decode(xml);
  return task.format === 'CII' ? completeCii(text, task.preceding) : text;
}

/**
 * The invoice PDF made a Factur-X / ZUGFeRD hybrid by the library: PDF/A-3b metadata (XMP with
 * pdfaid:part 3 and the Factur-X extension schema), an sRGB output intent, and the CII attached as
 * `factur-x.xml` with AFRelationship /Alternative.
 *
 * The CII the library embeds is written inside its Factur-X writer, so what the library leaves out
 * (the delivery block, a credit note's preceding invoice) is added on the way in, as the /cii.xml
 * document has it: the hook wraps the writer's
 * attachFacturX, which the pinned library version calls with the finished XML.
 */
export async function writeFacturX(
  task: EInvoiceTask & { pdf: Uint8Array; fileName: string },
): Promise<Uint8Array> {
  let hooked = false;
  const bytes = await generate(
    task,
    FACTUR_X_FORMAT,
    {
      pdf: {
        buffer: task.pdf,
        filename: task.fileName,
        mimetype: 'application/pdf',
      },
    },
    (formatter) => {
      const writer = formatter as FacturXFormatter;
      const attach = writer.attachFacturX.bind(writer);
      writer.attachFacturX = (pdf, options, xml) => {
        hooked = true;
        return attach(pdf, options, completeCii(xml, task.preceding));
      };
    },
  );
  if (!hooked)
    throw new Error('@e-invoice-eu/core no longer attaches the Factur-X XML through attachFacturX');
  return typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes;
}

/** What @e-invoice-eu/core 2.3.4 leaves out of its CII, added: the delivery block, the preceding invoice. */
const completeCii = (xml: string, preceding: PrecedingInvoice | null): string =>
  withPrecedingInvoice(withDeliveryBlock(xml), preceding);

/**
 * The header delivery block, which the CII D16B and Factur-X schemas require even empty. The library
 * writes it only from a delivery with content: an invoice whose lines name periods has no date of
 * supply (BT-72), so its CII lacked the block and failed the Factur-X XSD (the EN 16931 rules do not
 * check for it).
 */
export function withDeliveryBlock(xml: string): string {
  if (xml.includes('<ram:ApplicableHeaderTradeDelivery')) return xml;
  const anchor = '<ram:ApplicableHeaderTradeSettlement>';
  return xml.replace(anchor, `<ram:ApplicableHeaderTradeDelivery/>${anchor}`);
}

const escapeXml = (value: string): string => value.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);

/**
 * The preceding invoice (BG-3) of a credit note in CII. @e-invoice-eu/core 2.3.4 maps it from
 * `cac:BillingReference/cbc:ID` rather than from the `cac:InvoiceDocumentReference` its own schema
 * requires, so its CII leaves it out; it goes where CII D16B puts it, after the monetary summation.
 */
export function withPrecedingInvoice(xml: string, preceding: PrecedingInvoice | null): string {
  if (!preceding || xml.includes('<ram:InvoiceReferencedDocument>')) return xml;
  const date = preceding.date
    ? `<ram:FormattedIssueDateTime><qdt:DateTimeString format="102">${preceding.date.replaceAll('-', '')}</qdt:DateTimeString></ram:FormattedIssueDateTime>`
    : '';
  const reference = `<ram:InvoiceReferencedDocument><ram:IssuerAssignedID>${escapeXml(preceding.handle)}</ram:IssuerAssignedID>${date}</ram:InvoiceReferencedDocument>`;
  const anchor = '</ram:SpecifiedTradeSettlementHeaderMonetarySummation>';
  return xml.replace(anchor, `${anchor}${reference}`);
}
