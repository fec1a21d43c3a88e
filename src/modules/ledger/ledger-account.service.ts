import type { RequestContext } from '../../context.ts';
import { flushOrFail } from '../../db/flush.ts';
import { loadOrNotFound, managedOrNotFound } from '../../db/loaders.ts';
import { type Connection, keysetPage, type PageArgs } from '../../db/pagination.ts';
import { DomainError } from '../../errors.ts';
import type { LedgerAccountCreateInput, LedgerAccountUpdateInput } from './ledger.input.ts';
import { ledgerLoaders } from './ledger.reads.ts';
import { type LedgerAccount, LedgerAccountSchema } from './ledger-account.entity.ts';

/** Ledger accounts of one environment. */
export class LedgerAccountService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  get(id: string): Promise<Readonly<LedgerAccount>> {
    return loadOrNotFound(this.ctx.loaders.of(ledgerLoaders).accountById, 'Ledger account', id);
  }

  list(page: PageArgs): Promise<Connection<LedgerAccount>> {
    return keysetPage(this.ctx.em, LedgerAccountSchema, { environmentId: this.ctx.environmentId }, page);
  }

  async create(input: LedgerAccountCreateInput): Promise<LedgerAccount> {
    const account = this.ctx.em.create(LedgerAccountSchema, {
      environmentId: this.ctx.environmentId,
      ...input,
    });
    await this.flush();
    return account;
  }

  /**
   * Applies the fields present in `input`. Barring an account keeps the account sets that use it
   * as they are; it only stops new sets from naming it.
   */
  async update(id: string, input: LedgerAccountUpdateInput): Promise<LedgerAccount> {
    const { em, environmentId } = this.ctx;
    const account = await managedOrNotFound(em, LedgerAccountSchema, environmentId, id, 'Ledger account');
    for (const [key, value] of Object.entries(input)) {
      if (value !== undefined) Object.assign(account, { [key]: value });
    }
    account.updatedAt = new Date();
    await this.flush();
    this.ctx.loaders.forget(ledgerLoaders);
    return account;
  }

  private flush(): Promise<void> {
    return flushOrFail(this.ctx.em, {
      unique: () =>
        DomainError.onField(
          'DUPLICATE',
          ['accountingCode'],
          'another ledger account of this environment has this accounting code',
        ),
    });
  }
}
