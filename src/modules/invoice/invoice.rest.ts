import { z } from 'zod';
import { listRoute } from '../../rest/list.ts';
import type { Route } from '../../rest/router.ts';
import { parseInput, withoutReadOnly } from '../../validation.ts';
import { BillingAddressResponse, billingAddressResponse } from '../customer/customer.rest.ts';
import { SETTLEMENT_STATUSES } from './invoice.arithmetic.ts';
import {
  E_INVOICE_MEDIA_TYPES,
  type EInvoiceSyntax,
  renderEInvoice,
  renderFacturXPdf,
} from './invoice.e-invoice.ts';
import { INVOICE_STATUSES, INVOICE_TYPES, type InvoiceItem, type Settlement } from './invoice.entity.ts';
import { INVOICE_READ_ONLY_FIELDS, InvoiceCreateBody } from './invoice.input.ts';
import { PDF_MEDIA_TYPE, pdfFileName, renderInvoicePdf } from './invoice.pdf.ts';
import { type InvoiceDocument, InvoiceReads } from './invoice.reads.ts';
import { amountDue } from './invoice-collection.ts';
import { InvoiceDraftService } from './invoice-drafts.service.ts';

/** Contract 2.3. Quantities and unit amounts are exact decimals of at most 15 digits: JSON numbers keep them. */
export const InvoiceItemResponse = z.object({
  id: z.uuid(),
  quantity: z.number(),
  unitAmount: z.number(),
  sku: z.string().nullable(),
  title: z.string(),
  description: z.string().nullable(),
  periodStart: z.iso.date().nullable(),
  periodEnd: z.iso.date().nullable(),
  amount: z.int(),
  taxAmount: z.int(),
  tax: z.object({ taxable: z.boolean(), taxCode: z.string().nullable(), taxRate: z.number().nullable() }),
  discount: z.object({ percentage: z.number(), amount: z.number() }),
});

/** Contract 2.4. */
export const SettlementResponse = z.object({
  date: z.iso.date(),
  amount: z.int(),
  reference: z.string().nullable(),
  note: z.string().nullable(),
});

/** Contract 2.1 and 2.2; amounts are integers in the currency's minor unit. */
export const InvoiceResponse = z.object({
  id: z.uuid(),
  handle: z.string().nullable(),
  type: z.enum(INVOICE_TYPES),
  status: z.enum(INVOICE_STATUSES),
  settlementStatus: z.enum(SETTLEMENT_STATUSES),
  currency: z.string().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime().nullable(),
  customer: z.object({
    id: z.uuid(),
    handle: z.string().nullable(),
    name: z.string(),
    billingAddress: BillingAddressResponse,
  }),
  memo: z.string().nullable(),
  date: z.iso.date(),
  dueDate: z.iso.date().nullable(),
  items: z.array(InvoiceItemResponse).nullable(),
  settlements: z.array(SettlementResponse).nullable(),
  totalExclVat: z.int(),
  totalVat: z.int(),
  totalInclVat: z.int(),
  totalDue: z.int(),
});

const itemResponse = (item: InvoiceItem): z.infer<typeof InvoiceItemResponse> => ({
  id: item.id,
  quantity: Number(item.quantity),
  unitAmount: Number(item.unitAmount),
  sku: item.sku ?? null,
  title: item.title,
  description: item.description ?? null,
  periodStart: item.periodStart ?? null,
  periodEnd: item.periodEnd ?? null,
  amount: item.amount,
  taxAmount: item.taxAmount,
  tax: {
    taxable: item.taxCode != null,
    taxCode: item.taxCode ?? null,
    taxRate: item.taxRate == null ? null : Number(item.taxRate),
  },
  discount: { percentage: Number(item.discountPercentage), amount: Number(item.discountAmount) },
});

const settlementResponse = (settlement: Settlement): z.infer<typeof SettlementResponse> => ({
  date: settlement.date,
  amount: settlement.amount,
  reference: settlement.reference ?? null,
  note: settlement.note ?? null,
});

/** An invoice or credit note as its REST answer (and the events about it) show it. */
export type InvoiceAnswer = z.infer<typeof InvoiceResponse>;

export const invoiceResponse = ({
  invoice,
  customer,
  items,
  settlements,
}: InvoiceDocument): InvoiceAnswer => ({
  id: invoice.id,
  handle: invoice.handle ?? null,
  type: invoice.type,
  status: invoice.status,
  settlementStatus: invoice.settlementStatus,
  currency: invoice.currency,
  createdAt: invoice.createdAt.toISOString(),
  updatedAt: invoice.updatedAt?.toISOString() ?? null,
  customer: {
    id: customer.id,
    handle: customer.handle,
    name: customer.name,
    billingAddress: billingAddressResponse(customer.billingAddress),
  },
  memo: invoice.memo ?? null,
  date: invoice.date,
  dueDate: invoice.dueDate ?? null,
  items: items.map(itemResponse),
  settlements: settlements.map(settlementResponse),
  totalExclVat: invoice.totalExclVat,
  totalVat: invoice.totalVat,
  totalInclVat: invoice.totalInclVat,
  totalDue: amountDue(invoice),
});

const XML_MEDIA_TYPE = 'application/xml';
const SYNTAX_NAMES: Record<EInvoiceSyntax, string> = {
  ubl: 'UBL 2.1',
  cii: 'UN/CEFACT CII',
  xrechnung: 'XRechnung 3.0 (UBL 2.1)',
};

export const invoiceRoutes: Route[] = [
  {
    method: 'POST',
    path: '/invoices',
    summary: 'Create a draft invoice',
    body: InvoiceCreateBody,
    response: { status: 201, description: 'The new draft invoice', schema: InvoiceResponse },
    handler: async ({ ctx, body }) => {
      const input = parseInput(InvoiceCreateBody, withoutReadOnly(body, INVOICE_READ_ONLY_FIELDS));
      // The answer is the one the `invoice.created` event carries, built once.
      const { invoice, answer } = await new InvoiceDraftService(ctx).createAnswered(input);
      return { status: 201, headers: { location: `/invoices/${invoice.id}` }, body: answer };
    },
  },
  {
    method: 'GET',
    path: '/invoices/{invoiceId}',
    summary: 'Read an invoice',
    response: {
      status: 200,
      description:
        'The invoice. With `Accept: application/pdf` (preferred over JSON) it is the invoice document as a PDF, ' +
        'sent with `Content-Disposition: inline; filename="<number>.pdf"` (`draft-<id>.pdf` for a draft). ' +
        'A booked invoice or credit note is also an EN 16931 e-invoice: `Accept: application/xml` or ' +
        '`application/ubl+xml` answers UBL 2.1, `application/cii+xml` UN/CEFACT CII (`<number>.xml`); a draft ' +
        'answers 409, as does an invoice whose seller profile or customer lacks a term EN 16931 requires ' +
        '(the problem names it).',
      schema: InvoiceResponse,
      alternatives: [PDF_MEDIA_TYPE, ...Object.keys(E_INVOICE_MEDIA_TYPES)],
      conflicts: true,
    },
    handler: async ({ ctx, params, mediaType }) => {
      const reads = new InvoiceReads(ctx);
      const id = params.invoiceId as string;
      const syntax = E_INVOICE_MEDIA_TYPES[mediaType];
      if (syntax) return eInvoiceResult(reads, id, syntax, mediaType);
      if (mediaType !== PDF_MEDIA_TYPE) return { status: 200, body: invoiceResponse(await reads.read(id)) };
      const printable = await reads.readPrintable(id);
      return {
        status: 200,
        headers: {
          'content-type': PDF_MEDIA_TYPE,
          'content-disposition': `inline; filename="${pdfFileName(printable.invoice)}"`,
        },
        body: await renderInvoicePdf(printable),
      };
    },
  },
  listRoute({
    path: '/invoices',
    what: 'invoices',
    item: InvoiceResponse,
    list: (ctx, page) => new InvoiceReads(ctx).list({}, page),
    respond: (ctx, invoices) => {
      const reads = new InvoiceReads(ctx);
      return Promise.all(invoices.map(async (invoice) => invoiceResponse(await reads.document(invoice))));
    },
  }),
  ...(['ubl', 'cii'] as const).map(
    (syntax): Route => ({
      method: 'GET',
      path: `/invoices/{invoiceId}/${syntax}.xml`,
      summary: `Download a booked invoice as an EN 16931 e-invoice in ${SYNTAX_NAMES[syntax]}`,
      response: {
        status: 200,
        description:
          `The e-invoice of a booked invoice or credit note in ${SYNTAX_NAMES[syntax]}, the same document ` +
          `\`GET /invoices/{invoiceId}\` answers to \`Accept: ${syntax === 'ubl' ? 'application/ubl+xml' : 'application/cii+xml'}\`, ` +
          'whatever the Accept header says (`Content-Disposition: inline; filename="<number>.xml"`). A draft answers ' +
          '409, as does an invoice whose seller profile or customer lacks a term EN 16931 requires (the problem names it).',
        schema: z.string(),
        mediaType: XML_MEDIA_TYPE,
        conflicts: true,
      },
      handler: ({ ctx, params }) =>
        eInvoiceResult(new InvoiceReads(ctx), params.invoiceId as string, syntax, XML_MEDIA_TYPE),
    }),
  ),
  {
    method: 'GET',
    path: '/invoices/{invoiceId}/xrechnung.xml',
    summary: 'Download a booked invoice as an XRechnung 3.0 e-invoice (UBL 2.1)',
    response: {
      status: 200,
      description:
        'The e-invoice of a booked invoice or credit note under the German CIUS XRechnung 3.0, in UBL 2.1 ' +
        '(`Content-Disposition: inline; filename="<number>.xml"`), whatever the Accept header says. The buyer ' +
        "reference (BT-10) is the customer's handle: for a German public buyer, set the handle to its " +
        'Leitweg-ID. A draft answers 409, as does an invoice lacking a term XRechnung requires (the problem ' +
        'names each: the customer handle, seller phone, IBAN, cities and postal codes).',
      schema: z.string(),
      mediaType: XML_MEDIA_TYPE,
      conflicts: true,
    },
    handler: ({ ctx, params }) =>
      eInvoiceResult(new InvoiceReads(ctx), params.invoiceId as string, 'xrechnung', XML_MEDIA_TYPE),
  },
  {
    method: 'GET',
    path: '/invoices/{invoiceId}/facturx.pdf',
    summary: 'Download a booked invoice as a Factur-X / ZUGFeRD PDF',
    response: {
      status: 200,
      description:
        'The invoice PDF as a Factur-X / ZUGFeRD hybrid in the EN 16931 profile: PDF/A-3 whose attachment ' +
        '`factur-x.xml` (relationship Alternative) is the UN/CEFACT CII e-invoice that `/cii.xml` answers, ' +
        'whatever the Accept header says (`Content-Disposition: inline; filename="<number>.pdf"`). A draft ' +
        'answers 409, as does an invoice whose seller profile or customer lacks a term EN 16931 requires ' +
        '(the problem names it).',
      schema: z.string(),
      mediaType: PDF_MEDIA_TYPE,
      conflicts: true,
    },
    handler: async ({ ctx, params }) => {
      const printable = await new InvoiceReads(ctx).readPrintable(params.invoiceId as string);
      return {
        status: 200,
        headers: {
          'content-type': PDF_MEDIA_TYPE,
          'content-disposition': `inline; filename="${pdfFileName(printable.invoice)}"`,
        },
        body: await renderFacturXPdf(printable),
      };
    },
  },
];

/** The e-invoice of a booked invoice in `syntax`, sent as `mediaType`: one code for Accept and the explicit paths. */
async function eInvoiceResult(reads: InvoiceReads, id: string, syntax: EInvoiceSyntax, mediaType: string) {
  const printable = await reads.readPrintable(id);
  const xml = await renderEInvoice(printable, syntax);
  return {
    status: 200,
    headers: {
      'content-type': `${mediaType}; charset=utf-8`,
      'content-disposition': `inline; filename="${pdfFileName(printable.invoice).replace(/\.pdf$/, '.xml')}"`,
    },
    body: Buffer.from(xml, 'utf8'),
  };
}
