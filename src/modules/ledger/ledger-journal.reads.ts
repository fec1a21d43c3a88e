import type { FilterQuery } from '@mikro-orm/core';
import type { RequestContext } from '../../context.ts';
import { type Connection, keysetPage, type PageArgs } from '../../db/pagination.ts';
import {
  type JournalEntry,
  JournalEntrySchema,
  type JournalLine,
  JournalLineSchema,
} from './journal.entity.ts';

export type JournalFilter = {
  dateFrom?: string | null;
  dateTo?: string | null;
  accountId?: string | null;
  invoiceId?: string | null;
  customerId?: string | null;
};

export type TrialBalanceRow = {
  accountId: string;
  currency: string;
  debit: number;
  credit: number;
  balance: number;
};

export type DeferredRevenue = {
  accountSetId: string;
  currency: string;
  balance: number;
  waterfall: { month: string; amount: number }[];
};

/** Reading the journal: entries by filter and balances per account. */
export class JournalReads {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  /** Entries in number order (ids are time-ordered and numbers are taken in commit order per environment). */
  async entries(filter: JournalFilter, page: PageArgs): Promise<Connection<JournalEntry>> {
    const { environmentId } = this.ctx;
    const where: FilterQuery<JournalEntry>[] = [{ environmentId }];
    if (filter.dateFrom) where.push({ date: { $gte: filter.dateFrom } });
    if (filter.dateTo) where.push({ date: { $lte: filter.dateTo } });
    if (filter.invoiceId) where.push({ invoiceId: filter.invoiceId });
    if (filter.customerId) where.push({ customerId: filter.customerId });
    if (filter.accountId) {
      const rows = await this.ctx.em.execute<{ entry_id: string }[]>(
        'select distinct entry_id from journal_line where environment_id = ? and account_id = ?',
        [environmentId, filter.accountId],
      );
      where.push({ id: { $in: rows.map((row) => row.entry_id) } });
    }
    return keysetPage(this.ctx.em, JournalEntrySchema, { $and: where }, page);
  }

  lines(entry: JournalEntry): Promise<JournalLine[]> {
    return this.ctx.em.find(
      JournalLineSchema,
      { environmentId: this.ctx.environmentId, entryId: entry.id },
      { orderBy: { id: 'asc' } },
    );
  }

  /** Debits, credits and balance per account and currency of the entries dated on or before `asOf`. */
  async trialBalance(asOf: string): Promise<TrialBalanceRow[]> {
    const rows = await this.ctx.em.execute<
      { account_id: string; currency: string; debit: string; credit: string }[]
    >(
      `select l.account_id, e.currency,
              coalesce(sum(l.amount) filter (where l.amount > 0), 0) as debit,
              coalesce(-sum(l.amount) filter (where l.amount < 0), 0) as credit
       from journal_line l join journal_entry e on e.id = l.entry_id
       where l.environment_id = ? and e.date <= ?
       group by l.account_id, e.currency
       order by e.currency, l.account_id`,
      [this.ctx.environmentId, asOf],
    );
    return rows.map((row) => ({
      accountId: row.account_id,
      currency: row.currency,
      debit: Number(row.debit),
      credit: Number(row.credit),
      balance: Number(row.debit) - Number(row.credit),
    }));
  }

  /**
   * Per account set and currency: the deferral balance of the entries dated on or before `asOf`,
   * and what the schedules of invoices dated by then still hold, by the month their rows fall due
   * (rows dated on or after `asOf`, as the schedules stand now).
   */
  async deferredRevenue(asOf: string): Promise<DeferredRevenue[]> {
    const { environmentId } = this.ctx;
    const balances = await this.ctx.em.execute<
      { account_set_id: string; currency: string; balance: string }[]
    >(
      `select s.id as account_set_id, e.currency, -sum(l.amount) as balance
       from journal_line l join journal_entry e on e.id = l.entry_id
         join account_set s on s.id = l.account_set_id and s.deferral_account_id = l.account_id
       where l.environment_id = ? and e.date <= ?
       group by s.id, e.currency order by s.id, e.currency`,
      [environmentId, asOf],
    );
    const months = await this.ctx.em.execute<
      { account_set_id: string; currency: string; month: string; amount: string }[]
    >(
      `select r.account_set_id, i.currency, to_char(r.date, 'YYYY-MM') as month, sum(r.amount) as amount
       from recognition_row r join invoice i on i.id = r.invoice_id
       where r.environment_id = ? and not r.cancelled and r.date >= ? and i.date <= ?
         -- a credit note's take-back is already in the open rows it lowered
         and not exists (select 1 from journal_entry j where j.id = r.posted_entry_id and j.kind = 'credit_note')
       group by r.account_set_id, i.currency, month order by month`,
      [environmentId, asOf, asOf],
    );
    return balances.map((row) => ({
      accountSetId: row.account_set_id,
      currency: row.currency,
      balance: Number(row.balance),
      waterfall: months
        .filter((month) => month.account_set_id === row.account_set_id && month.currency === row.currency)
        .map((month) => ({ month: month.month, amount: Number(month.amount) })),
    }));
  }
}
