import type { EntityManager } from '@mikro-orm/postgresql';
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import { AccessService } from '../../auth/access.service.ts';
import { CalendarDate, today } from '../../dates/calendar.ts';
import { newId } from '../../db/ids.ts';
import { inEnvironment } from '../../db/tenant-transaction.ts';
import type { JobDependencies } from '../../jobs/runner.ts';
import { JournalEntrySchema, JournalLineSchema } from './journal.entity.ts';
import { assertOpen, takeEntryNumbers } from './ledger-journal.service.ts';

export const LEDGER_RECOGNITION_TASK = 'ledger-recognition';

/** Rows posted in one transaction; a run that stops half-way leaves the rest to the next. */
const BATCH = 500;

type DueRow = {
  id: string;
  invoice_id: string;
  invoice_item_id: string;
  account_set_id: string;
  deferral_account_id: string;
  income_account_id: string;
  date: string;
  amount: string;
  customer_id: string;
  currency: string;
};

/**
 * Posts every open schedule row of the environment dated before `upTo` (deferral to income, one
 * entry per row, dated the row's date), in batches each run by `transaction`. A row is taken with
 * `for update skip locked` and marked with its entry in the same transaction, so each posts exactly
 * once however many runs overlap, and a rerun finds nothing left. Returns how many rows it posted.
 */
export async function runRecognition(
  environmentId: string,
  upTo: string,
  transaction: (work: (tx: EntityManager) => Promise<number>) => Promise<number>,
): Promise<number> {
  let posted = 0;
  for (;;) {
    const count = await transaction(async (tx) => {
      const rows = await tx.execute<DueRow[]>(
        `select r.id, r.invoice_id, r.invoice_item_id, r.account_set_id, r.deferral_account_id,
                r.income_account_id, to_char(r.date, 'YYYY-MM-DD') as date, r.amount, i.customer_id, i.currency
         from recognition_row r join invoice i on i.id = r.invoice_id
         where r.environment_id = ? and r.posted_entry_id is null and not r.cancelled and r.date < ?
         order by r.date, r.id limit ? for update of r skip locked`,
        [environmentId, upTo, BATCH],
      );
      if (rows.length === 0) return 0;
      // One statement per kind of row for the whole batch: the numbers, the entries, their lines.
      const postings = rows.map((row) => {
        const amount = Number(row.amount);
        const side = { accountSetId: row.account_set_id, invoiceItemId: row.invoice_item_id, taxCode: null };
        return [
          { accountId: row.deferral_account_id, amount, ...side },
          { accountId: row.income_account_id, amount: -amount, ...side },
        ];
      });
      await assertOpen(tx, environmentId, postings.flat());
      const first = await takeEntryNumbers(tx, environmentId, rows.length);
      const entries = rows.map((row, index) => ({
        id: newId(),
        environmentId,
        number: first + index,
        kind: 'recognition' as const,
        date: row.date,
        invoiceId: row.invoice_id,
        customerId: row.customer_id,
        currency: row.currency,
        settlementId: null,
        refundId: null,
        createdAt: new Date(),
      }));
      await tx.insertMany(JournalEntrySchema, entries);
      await tx.insertMany(
        JournalLineSchema,
        postings.flatMap((lines, index) =>
          lines.map((line) => ({
            id: newId(),
            environmentId,
            entryId: entries[index]?.id as string,
            ...line,
          })),
        ),
      );
      await tx.execute(
        `update recognition_row set posted_entry_id = case id ${rows.map(() => 'when ? then ?::uuid').join(' ')} end
         where id in (${rows.map(() => '?').join(', ')})`,
        [...rows.flatMap((row, index) => [row.id, entries[index]?.id]), ...rows.map((row) => row.id)],
      );
      return rows.length;
    });
    posted += count;
    if (count < BATCH) return posted;
  }
}

/** The task's payload: the date to post up to (exclusive; today, UTC, when left out) and optionally one environment. */
const RecognitionPayload = z
  .object({ upTo: CalendarDate.optional(), environmentId: z.uuid().optional() })
  .default({});

/** The daily recognition run over every environment, also queued on demand with a date. */
export function ledgerRecognitionTasks({ orm, logger }: JobDependencies): Record<string, Task> {
  return {
    [LEDGER_RECOGNITION_TASK]: async (payload) => {
      const { upTo = today(), environmentId } = RecognitionPayload.parse(payload ?? {});
      const environments = environmentId
        ? [{ id: environmentId }]
        : await new AccessService(orm.em.fork()).listEnvironments();
      for (const { id } of environments) {
        const posted = await runRecognition(id, upTo, (work) => inEnvironment(orm.em.fork(), id, work));
        if (posted > 0) logger.info({ environmentId: id, posted, upTo }, 'revenue recognized');
      }
    },
  };
}
