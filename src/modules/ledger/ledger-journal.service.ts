import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { today } from '../../dates/calendar.ts';
import { newId } from '../../db/ids.ts';
import { cachedRead } from '../../db/read-cache.ts';
import { DomainError } from '../../errors.ts';
import type { Refund } from '../balance/balance.entity.ts';
import { BALANCE_REFERENCE } from '../balance/balance.service.ts';
import type { Invoice, InvoiceItem } from '../invoice/invoice.entity.ts';
import { InvoiceItemSchema, InvoiceSchema } from '../invoice/invoice.entity.ts';
import { type AccountSet, AccountSetSchema } from './account-set.entity.ts';
import {
  type JournalEntry,
  JournalEntrySchema,
  type JournalKind,
  type JournalLine,
  JournalLineSchema,
  type LedgerSettings,
  type RecognitionRow,
} from './journal.entity.ts';
import {
  bookingLines,
  type LineTarget,
  type PostedItem,
  type PostingLine,
  refundLines,
  reversedLines,
  settlementLines,
} from './ledger.posting.ts';
import { LedgerAccountSchema } from './ledger-account.entity.ts';
import {
  cancelOpenRows,
  createSchedules,
  creditSchedule,
  type DeferredLine,
  lockSchedules,
  postedSum,
  recordTakeBack,
} from './ledger-recognition.service.ts';
import { ensureLedgerSettings } from './ledger-settings.service.ts';

/**
 * Takes the next `count` entry numbers of the environment and returns the first: the invoice
 * numbers' approach, one upsert on a counter row that stays locked until the transaction ends, so a
 * rollback leaves no gap.
 */
export async function takeEntryNumbers(tx: EntityManager, environmentId: string, count = 1): Promise<number> {
  const [row] = await tx.execute<{ last_number: string }[]>(
    `insert into journal_numbering (environment_id, last_number) values (?, ?)
     on conflict (environment_id) do update set last_number = journal_numbering.last_number + excluded.last_number
     returning last_number`,
    [environmentId, count],
  );
  if (!row) throw new Error('the journal numbering upsert returned no row');
  return Number(row.last_number) - count + 1;
}

/** Refuses postings to a barred account, naming it. */
export async function assertOpen(tx: EntityManager, environmentId: string, lines: readonly PostingLine[]) {
  const ids = [...new Set(lines.map((posting) => posting.accountId))];
  const barred = await cachedRead(`barred-accounts:${environmentId}:${[...ids].sort().join(',')}`, () =>
    tx.find(LedgerAccountSchema, { environmentId, id: { $in: ids }, barred: true }),
  );
  const [first] = barred;
  if (first) {
    throw new DomainError(
      'CONFLICT',
      `ledger account ${first.accountingCode} (${first.name}) is barred and takes no new postings; unbar it or change the account set or ledger settings that name it`,
    );
  }
}

export type EntryHead = {
  kind: JournalKind;
  date: string;
  settlementId?: string;
} & (
  | { invoice: Pick<Invoice, 'id' | 'customerId' | 'currency'> }
  /** A refund out of the credit balance belongs to no invoice. */
  | { refund: Pick<Refund, 'id' | 'customerId' | 'currency'> }
);

/** The rows of one entry numbered `number`: the entry and its lines. */
export function entryRows(
  environmentId: string,
  head: EntryHead,
  number: number,
  lines: readonly PostingLine[],
): { entry: JournalEntry; lines: JournalLine[] } {
  const entryId = newId();
  const owner = 'invoice' in head ? head.invoice : head.refund;
  return {
    entry: {
      id: entryId,
      environmentId,
      number,
      kind: head.kind,
      date: head.date,
      invoiceId: 'invoice' in head ? head.invoice.id : null,
      refundId: 'refund' in head ? head.refund.id : null,
      customerId: owner.customerId,
      currency: owner.currency,
      settlementId: head.settlementId ?? null,
      createdAt: new Date(),
    },
    lines: lines.map((posting) => ({
      id: newId(),
      environmentId,
      entryId,
      accountId: posting.accountId,
      amount: posting.amount,
      accountSetId: posting.accountSetId,
      invoiceItemId: posting.invoiceItemId,
      taxCode: posting.taxCode,
    })),
  };
}

/** Writes one entry with its lines under the next number; returns its id. */
export async function writeEntry(
  environmentId: string,
  tx: EntityManager,
  head: EntryHead,
  lines: readonly PostingLine[],
): Promise<string> {
  await assertOpen(tx, environmentId, lines);
  // Written directly rather than through the unit of work: lines reference the entry by a plain
  // column, and nothing reads these rows back in the transaction.
  const rows = entryRows(environmentId, head, await takeEntryNumbers(tx, environmentId), lines);
  await tx.insert(JournalEntrySchema, rows.entry);
  if (rows.lines.length > 0) await tx.insertMany(JournalLineSchema, rows.lines);
  return rows.entry.id;
}

/** Whether the invoice's booking is in the journal (invoices booked before the ledger are not). */
async function isPosted(tx: EntityManager, environmentId: string, invoiceId: string): Promise<boolean> {
  const count = await tx.count(JournalEntrySchema, {
    environmentId,
    invoiceId,
    kind: { $in: ['booking', 'credit_note'] },
  });
  return count > 0;
}

/** The account set each line posts with: its product's (by sku), else the environment's default. */
async function lineTargets(
  tx: EntityManager,
  environmentId: string,
  settings: LedgerSettings,
  items: readonly {
    id: string;
    amount: number;
    sku?: string | null;
    periodStart?: string | null;
    periodEnd?: string | null;
    creditedItemId?: string | null;
  }[],
): Promise<{ targets: Map<string, LineTarget>; deferred: DeferredLine[] }> {
  const skus = [...new Set(items.flatMap((item) => (item.sku ? [item.sku] : [])))];
  const bySku = new Map<string, string>();
  if (skus.length > 0) {
    const rows = await cachedRead(`product-account-sets:${environmentId}:${[...skus].sort().join(',')}`, () =>
      tx.execute<{ handle: string; account_set_id: string }[]>(
        `select p.handle, s.account_set_id from product p join product_account_set s on s.product_id = p.id
         where p.environment_id = ? and p.handle in (${skus.map(() => '?').join(', ')})`,
        [environmentId, ...skus],
      ),
    );
    for (const row of rows) bySku.set(row.handle, row.account_set_id);
  }
  // A credit note line goes back to the accounts the line it credits was posted to.
  const credited = items.flatMap((item) => (item.creditedItemId ? [item.creditedItemId] : []));
  const postedLines = credited.length
    ? await tx.find(JournalLineSchema, { environmentId, invoiceItemId: { $in: credited } })
    : [];
  const setIds = new Set([settings.defaultAccountSetId, ...bySku.values()]);
  for (const posted of postedLines) if (posted.accountSetId) setIds.add(posted.accountSetId);
  const sets = new Map<string, AccountSet>(
    (
      await cachedRead(`account-sets:${environmentId}:${[...setIds].sort().join(',')}`, () =>
        tx.find(AccountSetSchema, { environmentId, id: { $in: [...setIds] } }),
      )
    ).map((set) => [set.id, set]),
  );
  const targets = new Map<string, LineTarget>();
  const deferredLines: DeferredLine[] = [];
  for (const item of items) {
    const posted = postedLines.find((candidate) => candidate.invoiceItemId === item.creditedItemId);
    const set = sets.get(
      posted?.accountSetId ?? (item.sku && bySku.get(item.sku)) ?? settings.defaultAccountSetId,
    );
    if (!set) throw new Error(`account set for invoice item ${item.id} is missing`);
    const deferred = set.recognitionStrategy !== 'none' && Boolean(item.periodStart && item.periodEnd);
    targets.set(item.id, {
      accountSetId: set.id,
      revenueAccountId: posted?.accountId ?? (deferred ? set.deferralAccountId : set.salesAccountId),
      taxAccountId: set.taxAccountId,
    });
    if (deferred && !posted && item.periodStart && item.periodEnd) {
      deferredLines.push({
        itemId: item.id,
        amount: item.amount,
        periodStart: item.periodStart,
        periodEnd: item.periodEnd,
        strategy: set.recognitionStrategy,
        accountSetId: set.id,
        deferralAccountId: set.deferralAccountId,
        incomeAccountId: set.incomeAccountId,
      });
    }
  }
  return { targets, deferred: deferredLines };
}

/**
 * What booking an invoice (or credit note) with `items` posts: its entry's lines, the deferred lines
 * whose schedules the invoice starts, and for a credit note against deferred lines, what it takes back
 * in proportion from what was recognized and what not.
 */
export async function bookingPosting(
  tx: EntityManager,
  environmentId: string,
  items: readonly InvoiceItem[],
  isCreditNote: boolean,
): Promise<{
  lines: PostingLine[];
  deferred: DeferredLine[];
  takeBacks: { template: RecognitionRow; amount: number }[];
}> {
  const settings = await ensureLedgerSettings(tx, environmentId);
  const { targets, deferred } = await lineTargets(tx, environmentId, settings, items);
  const credited = items.flatMap((item) => (item.creditedItemId ? [item.creditedItemId] : []));
  const schedules = await lockSchedules(tx, environmentId, isCreditNote ? credited : []);
  const takeBacks: { template: RecognitionRow; amount: number }[] = [];
  for (const item of items) {
    const rows = item.creditedItemId ? schedules.get(item.creditedItemId) : undefined;
    const target = targets.get(item.id);
    if (!rows?.[0] || !target) continue;
    const amount = creditSchedule(rows, item.amount);
    target.recognized = { accountId: rows[0].incomeAccountId, amount };
    takeBacks.push({ template: rows[0], amount });
  }
  const lines = bookingLines(
    settings.receivableAccountId,
    items,
    (item: PostedItem) => targets.get(item.id) as LineTarget,
    isCreditNote ? -1 : 1,
  );
  return { lines, deferred, takeBacks };
}

/**
 * Posts a booking: the invoice's (or credit note's) entry, then the settlements booking made. Called
 * in the booking transaction after the invoice is numbered.
 */
export async function postInvoiceBooking(
  ctx: ServiceContext,
  tx: EntityManager,
  invoice: Invoice,
): Promise<void> {
  const { environmentId } = ctx;
  await tx.flush();
  if (invoice.creditedInvoiceId && !(await isPosted(tx, environmentId, invoice.creditedInvoiceId))) return;
  const items = await tx.find(
    InvoiceItemSchema,
    { environmentId, invoiceId: invoice.id },
    { orderBy: { id: 'asc' } },
  );
  const isCreditNote = invoice.type === 'credit_note';
  const { lines, deferred, takeBacks } = await bookingPosting(tx, environmentId, items, isCreditNote);
  // A zero-total booking still gets its (empty) entry: its settlements and void follow a booking.
  const kind = isCreditNote ? 'credit_note' : 'booking';
  const entryId = await writeEntry(environmentId, tx, { kind, date: invoice.date, invoice }, lines);
  for (const { template, amount } of takeBacks) recordTakeBack(tx, template, amount, invoice.date, entryId);
  if (!isCreditNote) await createSchedules(tx, environmentId, invoice.id, deferred);
  await tx.flush();
  await postSettlements(ctx, tx, invoice);
}

type PendingSettlement = {
  id: string;
  invoice_id: string;
  type: 'invoice' | 'credit_note';
  date: string;
  amount: string;
  reference: string | null;
};

/**
 * Posts the settlements of the customer's posted invoices in the invoice's currency that are not in
 * the journal yet: cash for payments, refunds and their reversals, the customer credit account for
 * what moved through the credit balance. What a credit note settles on the invoice it credits (and
 * its own matching settlement) posts nothing: the credit note's entry already credited receivable.
 */
export async function postSettlements(
  ctx: ServiceContext,
  tx: EntityManager,
  invoice: Pick<Invoice, 'customerId' | 'currency'>,
): Promise<void> {
  const { environmentId } = ctx;
  await tx.flush();
  const pending = await tx.execute<PendingSettlement[]>(
    `select s.id, s.invoice_id, i.type, to_char(s.date, 'YYYY-MM-DD') as date, s.amount, s.reference
     from settlement s join invoice i on i.id = s.invoice_id
     where s.environment_id = ? and i.customer_id = ? and i.currency = ?
       and not exists (select 1 from journal_entry j where j.settlement_id = s.id)
       and exists (select 1 from journal_entry b where b.environment_id = s.environment_id
                   and b.invoice_id = i.id and b.kind in ('booking', 'credit_note'))
       and not (i.type = 'credit_note' and coalesce(i.credit_outcome, 'settle_invoice') = 'settle_invoice')
       and not (i.type = 'invoice' and s.reverses_settlement_id is null and exists (
         select 1 from invoice n where n.environment_id = s.environment_id and n.credited_invoice_id = i.id
           and n.handle = s.reference and n.status = 'booked'
           and coalesce(n.credit_outcome, 'settle_invoice') = 'settle_invoice'))
     order by s.created_at, s.id`,
    [environmentId, invoice.customerId, invoice.currency],
  );
  if (pending.length === 0) return;
  const settings = await ensureLedgerSettings(tx, environmentId);
  const invoices = new Map<string, Invoice>();
  for (const settlement of pending) {
    const counterpart =
      settlement.reference === BALANCE_REFERENCE ? settings.customerCreditAccountId : settings.cashAccountId;
    const lines = settlementLines(
      settings.receivableAccountId,
      counterpart,
      Number(settlement.amount),
      settlement.type === 'invoice' ? 1 : -1,
    );
    const owner =
      invoices.get(settlement.invoice_id) ??
      (await tx.findOneOrFail(InvoiceSchema, { id: settlement.invoice_id, environmentId }));
    invoices.set(owner.id, owner);
    await writeEntry(
      environmentId,
      tx,
      { kind: 'settlement', date: settlement.date, invoice: owner, settlementId: settlement.id },
      lines,
    );
  }
}

/** Posts a void: the reverse of the invoice's booking entry, dated the day of the void. */
export async function postVoid(ctx: ServiceContext, tx: EntityManager, invoice: Invoice): Promise<void> {
  const { environmentId } = ctx;
  await tx.flush();
  const booking = await tx.findOne(JournalEntrySchema, {
    environmentId,
    invoiceId: invoice.id,
    kind: 'booking',
  });
  if (!booking) return;
  const lines = await tx.find(
    JournalLineSchema,
    { environmentId, entryId: booking.id },
    { orderBy: { id: 'asc' } },
  );
  // What a deferred line's schedule already recognized is taken back from income, the rest from
  // deferral; the rows still open are cancelled.
  const itemIds = lines.flatMap((posting) => (posting.invoiceItemId ? [posting.invoiceItemId] : []));
  const schedules = await lockSchedules(tx, environmentId, itemIds);
  const posted = lines.flatMap((posting): PostingLine[] => {
    const base = {
      accountId: posting.accountId,
      amount: posting.amount,
      accountSetId: posting.accountSetId ?? null,
      invoiceItemId: posting.invoiceItemId ?? null,
      taxCode: posting.taxCode ?? null,
    };
    const rows = posting.invoiceItemId ? schedules.get(posting.invoiceItemId) : undefined;
    if (!rows?.[0]) return [base];
    const recognized = postedSum(rows);
    cancelOpenRows(rows);
    return [
      { ...base, amount: posting.amount + recognized },
      { ...base, accountId: rows[0].incomeAccountId, amount: -recognized },
    ].filter((part) => part.amount !== 0);
  });
  await writeEntry(environmentId, tx, { kind: 'void', date: today(), invoice }, reversedLines(posted));
  await tx.flush();
}

/**
 * Posts a refund out of the customer's credit balance: the money leaves cash and the customer credit
 * account gives it up. (A refund by credit note posts through its settlement instead.)
 */
export async function postRefund(ctx: ServiceContext, tx: EntityManager, refund: Refund): Promise<void> {
  const { environmentId } = ctx;
  const settings = await ensureLedgerSettings(tx, environmentId);
  // What the refund drew from over-paid invoices moved to customer credit first.
  await postSettlements(ctx, tx, refund);
  const lines = refundLines(settings.customerCreditAccountId, settings.cashAccountId, refund.amount);
  await writeEntry(environmentId, tx, { kind: 'refund', date: refund.date, refund }, lines);
}
