import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../db/ids.ts';
import type { RecognitionStrategy } from './account-set.entity.ts';
import { type RecognitionRow, RecognitionRowSchema } from './journal.entity.ts';
import { creditAgainstSchedule, recognitionSchedule } from './ledger.recognition.ts';

/** A booked line that gets a schedule, with the accounts its rows post between. */
export type DeferredLine = {
  itemId: string;
  amount: number;
  periodStart: string;
  periodEnd: string;
  strategy: RecognitionStrategy;
  accountSetId: string;
  deferralAccountId: string;
  incomeAccountId: string;
};

/** Writes the schedule of each deferred line of a booked invoice (rows of zero are left out). */
export async function createSchedules(
  tx: EntityManager,
  environmentId: string,
  invoiceId: string,
  lines: readonly DeferredLine[],
): Promise<void> {
  const rows = lines.flatMap((line) =>
    recognitionSchedule(line.strategy, line.amount, line.periodStart, line.periodEnd)
      .filter((row) => row.amount !== 0)
      .map((row) => ({
        id: newId(),
        environmentId,
        invoiceId,
        invoiceItemId: line.itemId,
        accountSetId: line.accountSetId,
        deferralAccountId: line.deferralAccountId,
        incomeAccountId: line.incomeAccountId,
        date: row.date,
        amount: row.amount,
        postedEntryId: null,
        cancelled: false,
      })),
  );
  if (rows.length > 0) await tx.insertMany(RecognitionRowSchema, rows);
}

/**
 * The live rows of the given lines' schedules, locked until the transaction ends: a recognition run
 * posting one of them waits for it, or skips it, so what is counted here is what stands.
 */
export async function lockSchedules(
  tx: EntityManager,
  environmentId: string,
  itemIds: readonly string[],
): Promise<Map<string, RecognitionRow[]>> {
  const byItem = new Map<string, RecognitionRow[]>();
  if (itemIds.length === 0) return byItem;
  const ids = await tx.execute<{ id: string }[]>(
    `select id from recognition_row where environment_id = ? and not cancelled
       and invoice_item_id in (${itemIds.map(() => '?').join(', ')})
     order by date, id for update`,
    [environmentId, ...itemIds],
  );
  if (ids.length === 0) return byItem;
  const rows = await tx.find(
    RecognitionRowSchema,
    { environmentId, id: { $in: ids.map((row) => row.id) } },
    { orderBy: { date: 'asc', id: 'asc' }, refresh: true },
  );
  for (const row of rows) byItem.set(row.invoiceItemId, [...(byItem.get(row.invoiceItemId) ?? []), row]);
  return byItem;
}

/** What a schedule has recognized so far: its posted rows (a credit's take-back is a negative one). */
export const postedSum = (rows: readonly RecognitionRow[]): number =>
  rows.reduce((sum, row) => (row.postedEntryId ? sum + row.amount : sum), 0);

/**
 * A credit of `credit` against a locked schedule: lowers its open rows in proportion and returns
 * the part to take back from income, to be recorded with `recordTakeBack` once the entry exists.
 */
export function creditSchedule(rows: readonly RecognitionRow[], credit: number): number {
  const open = rows.filter((row) => !row.postedEntryId);
  const { fromIncome, rows: amounts } = creditAgainstSchedule(
    credit,
    postedSum(rows),
    open.map((row) => row.amount),
  );
  open.forEach((row, index) => {
    row.amount = amounts[index] as number;
    // A row lowered to nothing has nothing left to post.
    if (row.amount === 0) row.cancelled = true;
  });
  return fromIncome;
}

/** Records what a credit note took back from income as a posted negative row of the schedule. */
export function recordTakeBack(
  tx: EntityManager,
  template: RecognitionRow,
  amount: number,
  date: string,
  entryId: string,
): void {
  if (amount === 0) return;
  tx.create(RecognitionRowSchema, {
    environmentId: template.environmentId,
    invoiceId: template.invoiceId,
    invoiceItemId: template.invoiceItemId,
    accountSetId: template.accountSetId,
    deferralAccountId: template.deferralAccountId,
    incomeAccountId: template.incomeAccountId,
    date,
    amount: -amount,
    postedEntryId: entryId,
    cancelled: false,
  });
}

/** A void: the open rows will never post. */
export function cancelOpenRows(rows: readonly RecognitionRow[]): void {
  for (const row of rows) if (!row.postedEntryId) row.cancelled = true;
}
