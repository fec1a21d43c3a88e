import { createRequire } from 'node:module';
import pdfmake from 'pdfmake';
import { type EInvoiceTask, writeFacturX } from './invoice.e-invoice-writer.ts';

export { writeEInvoice } from './invoice.e-invoice-writer.ts';

import { FONT, type InvoicePdfData, InvoicePdfDocument } from './invoice.pdf-document.ts';

// DejaVu Sans covers Latin, Greek and Cyrillic: the PDF standard fonts stop at Windows-1252, which
// would drop letters such as "ł" or "ő" from customer names and addresses.
const resolve = createRequire(import.meta.url).resolve;
const fontFiles = {
  normal: resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'),
  bold: resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf'),
};
pdfmake.setFonts({ [FONT]: fontFiles });
// A document definition names no images or attachments: nothing is read from anywhere but the fonts.
const readable = new Set(Object.values(fontFiles));
pdfmake.setLocalAccessPolicy((path) => readable.has(path));
pdfmake.setUrlAccessPolicy(() => false);

/** Runs in a worker thread (see invoice.pdf.ts): answers the invoice as the bytes of an A4 PDF. */
export default async function renderInvoice(data: InvoicePdfData): Promise<Uint8Array> {
  const bytes = await pdfmake.createPdf(new InvoicePdfDocument(data).definition()).getBuffer();
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** What the Factur-X render needs: the printed invoice, its e-invoice model and the PDF's file name. */
export type FacturXTask = { pdf: InvoicePdfData; eInvoice: EInvoiceTask; fileName: string };

/**
 * Runs in a worker thread too: the invoice PDF made a Factur-X hybrid (PDF/A-3 with the CII inside),
 * rendered and converted in one go, so the PDF's bytes never cross between threads twice.
 */
export async function renderFacturX(task: FacturXTask): Promise<Uint8Array> {
  const pdf = await renderInvoice(task.pdf);
  return writeFacturX({ ...task.eInvoice, pdf, fileName: task.fileName });
}
