import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../../context.ts';
import { DomainError } from '../../errors.ts';
import { INVOICE_TYPES, InvoiceNumberingSchema, type InvoiceType } from './invoice.entity.ts';
import type { InvoiceNumberingInput } from './invoice.input.ts';

export const DEFAULT_PREFIXES: Record<InvoiceType, string> = { invoice: 'INV-', credit_note: 'CN-' };

/** How the numbers of one type look in one environment, and how far they have got. */
export type NumberingState = { type: InvoiceType; prefix: string; lastNumber: number; nextHandle: string };

const NUMBER_DIGITS = 6;

export const formatHandle = (prefix: string, number: number): string =>
  `${prefix}${String(number).padStart(NUMBER_DIGITS, '0')}`;

/**
 * Takes the next number of `type` in the environment: one upsert on the counter row, which stays
 * locked until the caller's transaction ends. A rolled-back booking rolls the counter back with it,
 * so numbers are gapless; concurrent bookings wait on the row, so none are duplicated.
 */
export async function takeNextHandle(tx: EntityManager, environmentId: string, type: InvoiceType) {
  const [row] = await tx.execute<{ prefix: string; last_number: string }[]>(
    `insert into invoice_numbering (environment_id, type, prefix, last_number) values (?, ?, ?, 1)
     on conflict (environment_id, type) do update set last_number = invoice_numbering.last_number + 1
     returning prefix, last_number`,
    [environmentId, type, DEFAULT_PREFIXES[type]],
  );
  if (!row) throw new Error('the numbering upsert returned no row');
  return formatHandle(row.prefix, Number(row.last_number));
}

/** The per-environment configuration of invoice and credit note numbers. */
export class InvoiceNumberingService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  async list(): Promise<NumberingState[]> {
    const rows = await this.ctx.em.find(InvoiceNumberingSchema, { environmentId: this.ctx.environmentId });
    return INVOICE_TYPES.map((type) => {
      const row = rows.find((candidate) => candidate.type === type);
      const prefix = row?.prefix ?? DEFAULT_PREFIXES[type];
      const lastNumber = row?.lastNumber ?? 0;
      return { type, prefix, lastNumber, nextHandle: formatHandle(prefix, lastNumber + 1) };
    });
  }

  /** Sets the prefix of the next numbers of `type`; numbers already issued keep theirs. */
  async update(type: InvoiceType, input: InvoiceNumberingInput): Promise<NumberingState> {
    const { environmentId } = this.ctx;
    await this.ctx.em.transactional(async (tx) => {
      // Serialises prefix changes of the environment, so two cannot both pass the check below. An
      // advisory lock, because the application's role may read environments but not lock them.
      await tx.execute("select pg_advisory_xact_lock(hashtextextended('invoice-numbering:' || ?, 0))", [
        environmentId,
      ]);
      const others = await tx.find(InvoiceNumberingSchema, { environmentId, type: { $ne: type } });
      const otherTypes = INVOICE_TYPES.filter((other) => other !== type);
      const taken = otherTypes.some(
        (other) =>
          (others.find((row) => row.type === other)?.prefix ?? DEFAULT_PREFIXES[other]) === input.prefix,
      );
      if (taken) {
        throw DomainError.onField(
          'DUPLICATE',
          ['prefix'],
          'another invoice type of this environment uses this prefix',
        );
      }
      await tx.execute(
        `insert into invoice_numbering (environment_id, type, prefix, last_number) values (?, ?, ?, 0)
         on conflict (environment_id, type) do update set prefix = excluded.prefix`,
        [environmentId, type, input.prefix],
      );
    });
    const state = (await this.list()).find((candidate) => candidate.type === type);
    if (!state) throw new Error(`no numbering state for ${type}`);
    return state;
  }
}
