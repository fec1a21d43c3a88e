import { z } from 'zod';
import type { RequestContext } from '../../context.ts';
import { CalendarDate } from '../../dates/calendar.ts';
import type { Route } from '../../rest/router.ts';
import { parseInput } from '../../validation.ts';

const CSV_MEDIA_TYPE = 'text/csv';
const MAX_LIMIT = 1000;

export const JournalExportQuery = z
  .strictObject({
    from: CalendarDate.meta({ description: 'First entry date (inclusive), YYYY-MM-DD' }),
    to: CalendarDate.meta({ description: 'Last entry date (inclusive), YYYY-MM-DD' }),
    after: z.uuid().optional().meta({ description: 'The nextCursor of the previous page' }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_LIMIT)
      .optional()
      .meta({
        description: `Entries per page, at most ${MAX_LIMIT} (the default). A CSV export without \`limit\` and \`after\` is the whole range in one streamed file.`,
      }),
  })
  .refine((query) => query.from <= query.to, { path: ['to'], message: 'must be on or after from' });

const JournalLineResponse = z.strictObject({
  accountId: z.uuid(),
  accountingCode: z.string(),
  debit: z.number().int(),
  credit: z.number().int(),
  invoiceItemId: z.uuid().nullable(),
  taxCode: z.string().nullable(),
});

const JournalEntryResponse = z.strictObject({
  id: z.uuid(),
  number: z.number().int(),
  kind: z.string(),
  date: z.string(),
  invoiceId: z.uuid().nullable().meta({ description: 'Null for a refund out of the credit balance' }),
  customerId: z.uuid(),
  currency: z.string(),
  lines: z.array(JournalLineResponse),
});

export const JournalExportResponse = z.strictObject({
  data: z.array(JournalEntryResponse),
  nextCursor: z.uuid().nullable(),
});

type ExportRow = {
  id: string;
  number: string;
  kind: string;
  date: string;
  invoice_id: string | null;
  customer_id: string;
  currency: string;
  account_id: string | null;
  accounting_code: string | null;
  amount: string | null;
  invoice_item_id: string | null;
  tax_code: string | null;
};

type PageQuery = { from: string; to: string; after: string | null; limit: number };

/**
 * One page of entries dated in [from, to], in number order, each with its lines. Numbers are taken
 * in commit order (the counter row stays locked until commit), so paging by number never skips an
 * entry that commits while a client pages.
 */
async function exportPage(ctx: RequestContext, query: PageQuery) {
  const rows = await ctx.em.execute<ExportRow[]>(
    `with page as (
       select id, number, kind, to_char(date, 'YYYY-MM-DD') as date, invoice_id, customer_id, currency
       from journal_entry
       where environment_id = ? and date between ? and ?
         and (?::uuid is null or number > (select number from journal_entry where id = ?::uuid))
       order by number limit ?)
     select p.*, l.account_id, a.accounting_code, l.amount, l.invoice_item_id, l.tax_code
     from page p left join journal_line l on l.entry_id = p.id
       left join ledger_account a on a.id = l.account_id
     order by p.number, l.id`,
    [ctx.environmentId, query.from, query.to, query.after, query.after, query.limit + 1],
  );
  const entries = new Map<string, z.infer<typeof JournalEntryResponse>>();
  for (const row of rows) {
    let entry = entries.get(row.id);
    if (!entry) {
      entry = {
        id: row.id,
        number: Number(row.number),
        kind: row.kind,
        date: row.date,
        invoiceId: row.invoice_id,
        customerId: row.customer_id,
        currency: row.currency,
        lines: [],
      };
      entries.set(row.id, entry);
    }
    if (row.account_id === null || row.amount === null) continue;
    const amount = Number(row.amount);
    entry.lines.push({
      accountId: row.account_id,
      accountingCode: row.accounting_code ?? '',
      debit: Math.max(amount, 0),
      credit: Math.max(-amount, 0),
      invoiceItemId: row.invoice_item_id,
      taxCode: row.tax_code,
    });
  }
  const all = [...entries.values()];
  const data = all.slice(0, query.limit);
  return { data, nextCursor: all.length > query.limit ? (data.at(-1)?.id ?? null) : null };
}

const csvField = (value: string | number | null) => {
  const text = value === null ? '' : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

const CSV_HEADER = 'number,date,kind,invoice_id,customer_id,currency,accounting_code,debit,credit,tax_code';

function csvRows(entries: z.infer<typeof JournalEntryResponse>[]): string[] {
  return entries.flatMap((entry) =>
    entry.lines.map((line) =>
      [
        entry.number,
        entry.date,
        entry.kind,
        entry.invoiceId,
        entry.customerId,
        entry.currency,
        line.accountingCode,
        line.debit,
        line.credit,
        line.taxCode,
      ]
        .map(csvField)
        .join(','),
    ),
  );
}

const csvText = (rows: string[]) => rows.map((row) => `${row}\r\n`).join('');

/** The whole range as CSV, a page at a time, for a streamed answer. */
async function* csvRange(ctx: RequestContext, from: string, to: string): AsyncIterable<Uint8Array> {
  const encoder = new TextEncoder();
  yield encoder.encode(csvText([CSV_HEADER]));
  let after: string | null = null;
  do {
    const page = await exportPage(ctx, { from, to, after, limit: MAX_LIMIT });
    if (page.data.length > 0) yield encoder.encode(csvText(csvRows(page.data)));
    after = page.nextCursor;
  } while (after);
}

export const ledgerExportRoutes: Route[] = [
  {
    method: 'GET',
    path: '/journal-entries',
    summary: 'Export the journal entries of a date range, a page at a time',
    query: JournalExportQuery,
    response: {
      status: 200,
      description:
        'Entries dated from `from` to `to` in number (posting) order, with their lines (debit and credit in minor ' +
        'units), a page at a time: pass `after` = nextCursor for the next page. With `Accept: text/csv`, one CSV ' +
        'row per line; without `limit` and `after` the whole range in one streamed file, else the page with the ' +
        'next page’s cursor in the `x-next-cursor` header (absent on the last page).',
      schema: JournalExportResponse,
      alternatives: [CSV_MEDIA_TYPE],
    },
    handler: async ({ ctx, request, mediaType }) => {
      const query = parseInput(JournalExportQuery, Object.fromEntries(new URL(request.url).searchParams));
      const csvType = `${CSV_MEDIA_TYPE}; charset=utf-8`;
      if (mediaType === CSV_MEDIA_TYPE && query.limit === undefined && query.after === undefined) {
        return {
          status: 200,
          headers: { 'content-type': csvType },
          stream: (streamCtx) => csvRange(streamCtx, query.from, query.to),
        };
      }
      const page = await exportPage(ctx, {
        from: query.from,
        to: query.to,
        after: query.after ?? null,
        limit: query.limit ?? MAX_LIMIT,
      });
      if (mediaType !== CSV_MEDIA_TYPE) return { status: 200, body: page };
      return {
        status: 200,
        headers: {
          'content-type': csvType,
          ...(page.nextCursor ? { 'x-next-cursor': page.nextCursor } : {}),
        },
        body: new TextEncoder().encode(csvText([CSV_HEADER, ...csvRows(page.data)])),
      };
    },
  },
];
