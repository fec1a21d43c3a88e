import { availableParallelism } from 'node:os';
import type { Piscina } from 'piscina';
import type { Invoice } from './invoice.entity.ts';
import { invoicePdfData } from './invoice.pdf-document.ts';
import type { PrintableInvoice } from './invoice.reads.ts';

export const PDF_MEDIA_TYPE = 'application/pdf';

/**
 * Laying out a long invoice takes seconds of CPU (about 2.7 s for 5000 lines), so it runs on worker
 * threads and the event loop keeps answering other requests meanwhile. At most half the cores render
 * at once, so renders cannot starve the event loop, and each worker holds one document at a time, so
 * a burst of PDF requests waits in the queue instead of growing the heap by one document per request.
 */
const RENDER_THREADS = Math.max(1, Math.floor(availableParallelism() / 2));

/** A worker idle this long exits, and the memory pdfmake and the fonts hold goes with it. */
const IDLE_MS = 60_000;

let pool: Piscina | undefined;

/**
 * The pool, and its first worker, start with the first PDF: a process that renders none never loads
 * pdfmake and the fonts, and the server's start does not wait for them.
 */
export async function renderPool(): Promise<Piscina> {
  if (!pool) {
    const { Piscina } = await import('piscina');
    pool ??= new Piscina({
      filename: new URL('./invoice.pdf-worker.ts', import.meta.url).href,
      minThreads: 0,
      maxThreads: RENDER_THREADS,
      concurrentTasksPerWorker: 1,
      idleTimeout: IDLE_MS,
    });
  }
  return pool;
}

/** The number, or `draft-<id>`, in the characters every file system takes (a prefix may hold "/"). */
export function pdfFileName(invoice: Invoice): string {
  return `${invoice.handle ? invoice.handle.replace(/[^A-Za-z0-9._-]/g, '-') : `draft-${invoice.id}`}.pdf`;
}

/** Renders the invoice as an A4 PDF on a worker thread; the fonts are embedded, so it looks the same everywhere. */
export async function renderInvoicePdf(view: PrintableInvoice): Promise<Uint8Array> {
  return (await renderPool()).run(invoicePdfData(view));
}
