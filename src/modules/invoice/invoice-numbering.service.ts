import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../../context.ts';
import { DomainError } from '../../errors.ts';
import { INVOICE_TYPES, InvoiceNumberingSchema, type InvoiceType } from './invoice.entity.ts';
import type { InvoiceNumberingInput } from './invoice.input.ts';
import { namesYear, parsePattern, prefixPattern, renderPattern } from './invoice-numbering.pattern.ts';

export const DEFAULT_PREFIXES: Record<InvoiceType, string> = { invoice: 'INV-', credit_note: 'CN-' };

/** How the numbers of one type look in one environment, and how far they have got. */
export type NumberingState = {
  type: InvoiceType;
  prefix: string;
  pattern: string;
  yearlyReset: boolean;
  lastNumber: number;
  nextHandle: string;
};

/** The row holding the configuration and the continuous count. */
const HEAD = '';

const today = () => new Date().toISOString().slice(0, 10);

/**
 * Takes the next number of `type` in the environment for an invoice dated `date`: one upsert on the
 * configuration row, which stays locked until the caller's transaction ends, so a pattern change
 * waits for the bookings under way and applies to the next number. Without a yearly reset that row
 * holds the count; with one, the year's own row does, upserted while the configuration row is held.
 * A rolled-back booking rolls the counter back with it, so numbers are gapless; concurrent bookings
 * wait on the row, so none are duplicated.
 */
export async function takeNextHandle(
  tx: EntityManager,
  environmentId: string,
  type: InvoiceType,
  date: string,
): Promise<string> {
  const [handle] = await takeNextHandles(tx, environmentId, type, date, 1);
  return handle as string;
}

/**
 * The next `count` numbers of `type` for invoices dated `date`, in order, taken as one block (a billing
 * batch's invoices, numbered once they are all known): takeNextHandle's upserts, moving the count by
 * `count` at once.
 */
export async function takeNextHandles(
  tx: EntityManager,
  environmentId: string,
  type: InvoiceType,
  date: string,
  count: number,
): Promise<string[]> {
  if (count <= 0) return [];
  const [head] = await tx.execute<
    { prefix: string; pattern: string | null; yearly_reset: boolean; last_number: string }[]
  >(
    `insert into invoice_numbering (environment_id, type, period_key, prefix, last_number) values (?, ?, '', ?, ?)
     on conflict (environment_id, type, period_key) do update
       set last_number = invoice_numbering.last_number + case when invoice_numbering.yearly_reset then 0 else excluded.last_number end
     returning prefix, pattern, yearly_reset, last_number`,
    [environmentId, type, DEFAULT_PREFIXES[type], count],
  );
  if (!head) throw new Error('the numbering upsert returned no row');
  const pattern = head.pattern ?? prefixPattern(head.prefix);
  const block = (last: number) =>
    Array.from({ length: count }, (_, index) => renderPattern(pattern, date, last - count + 1 + index));
  if (!head.yearly_reset) return block(Number(head.last_number));
  const [period] = await tx.execute<{ last_number: string }[]>(
    `insert into invoice_numbering (environment_id, type, period_key, prefix, last_number) values (?, ?, ?, ?, ?)
     on conflict (environment_id, type, period_key) do update set last_number = invoice_numbering.last_number + excluded.last_number
     returning last_number`,
    [environmentId, type, date.slice(0, 4), head.prefix, count],
  );
  if (!period) throw new Error('the numbering upsert returned no row');
  return block(Number(period.last_number));
}

/** The per-environment configuration of invoice and credit note numbers. */
export class InvoiceNumberingService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  /** Each type's numbering; with a yearly reset, the count and next number are those of today's year. */
  async list(): Promise<NumberingState[]> {
    const rows = await this.ctx.em.find(InvoiceNumberingSchema, { environmentId: this.ctx.environmentId });
    const date = today();
    return INVOICE_TYPES.map((type) => {
      const head = rows.find((candidate) => candidate.type === type && candidate.periodKey === HEAD);
      const prefix = head?.prefix ?? DEFAULT_PREFIXES[type];
      const pattern = head?.pattern ?? prefixPattern(prefix);
      const yearlyReset = head?.yearlyReset ?? false;
      const counter = yearlyReset
        ? rows.find((candidate) => candidate.type === type && candidate.periodKey === date.slice(0, 4))
        : head;
      const lastNumber = counter?.lastNumber ?? 0;
      return {
        type,
        prefix,
        pattern,
        yearlyReset,
        lastNumber,
        nextHandle: renderPattern(pattern, date, lastNumber + 1),
      };
    });
  }

  /**
   * Sets how the next numbers of `type` look: a prefix (followed by six digits, as before patterns)
   * or a pattern, and whether the sequence resets yearly. Numbers already issued keep theirs.
   */
  async update(type: InvoiceType, input: InvoiceNumberingInput): Promise<NumberingState> {
    const { environmentId } = this.ctx;
    if (input.pattern != null) parsePattern(input.pattern, ['pattern']);
    await this.ctx.em.transactional(async (tx) => {
      // Serialises changes of the environment's numbering, so two cannot both pass the checks below.
      // An advisory lock, because the application's role may read environments but not lock them.
      await tx.execute("select pg_advisory_xact_lock(hashtextextended('invoice-numbering:' || ?, 0))", [
        environmentId,
      ]);
      const heads = await tx.find(InvoiceNumberingSchema, { environmentId, periodKey: HEAD });
      const current = heads.find((row) => row.type === type);
      const prefix = input.prefix ?? current?.prefix ?? DEFAULT_PREFIXES[type];
      // A new prefix stands for the format from before patterns; otherwise a pattern given replaces.
      const pattern = input.prefix != null ? null : (input.pattern ?? current?.pattern ?? null);
      const yearlyReset = input.yearlyReset ?? current?.yearlyReset ?? false;
      const effective = pattern ?? prefixPattern(prefix);
      const field = input.pattern != null ? ['pattern'] : input.prefix != null ? ['prefix'] : ['yearlyReset'];
      if (yearlyReset && !namesYear(effective)) {
        throw DomainError.onField(
          'MISSING_YEAR',
          field,
          'with a yearly reset the pattern must name the year ({YYYY} or {YY}), or numbers would repeat',
        );
      }
      const taken = INVOICE_TYPES.filter((other) => other !== type).some((other) => {
        const row = heads.find((candidate) => candidate.type === other);
        return (row?.pattern ?? prefixPattern(row?.prefix ?? DEFAULT_PREFIXES[other])) === effective;
      });
      if (taken) {
        throw DomainError.onField(
          'DUPLICATE',
          field,
          'another invoice type of this environment uses this format',
        );
      }
      await tx.execute(
        `insert into invoice_numbering (environment_id, type, period_key, prefix, pattern, yearly_reset, last_number)
         values (?, ?, '', ?, ?, ?, 0)
         on conflict (environment_id, type, period_key) do update
           set prefix = excluded.prefix, pattern = excluded.pattern, yearly_reset = excluded.yearly_reset`,
        [environmentId, type, prefix, pattern, yearlyReset],
      );
    });
    const state = (await this.list()).find((candidate) => candidate.type === type);
    if (!state) throw new Error(`no numbering state for ${type}`);
    return state;
  }
}
