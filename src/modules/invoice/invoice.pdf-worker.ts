import { createRequire } from 'node:module';
import pdfmake from 'pdfmake';
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
