import type { RequestContext } from '../../context.ts';
import { loadOrNotFound } from '../../db/loaders.ts';
import { type Connection, keysetPage, type PageArgs } from '../../db/pagination.ts';
import { DomainError, type FieldIssue } from '../../errors.ts';
import { ACCOUNT_ROLES, type AccountRole, type AccountSet, AccountSetSchema } from './account-set.entity.ts';
import type { AccountSetCreateInput } from './ledger.input.ts';
import { ledgerLoaders } from './ledger.reads.ts';
import type { LedgerAccount } from './ledger-account.entity.ts';

type AccountField = 'salesAccount' | 'incomeAccount' | 'taxAccount' | 'deferralAccount';
const accountField = (role: AccountRole) => role.slice(0, -'Id'.length) as AccountField;

/** Account sets of one environment. */
export class AccountSetService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  get(id: string): Promise<Readonly<AccountSet>> {
    return loadOrNotFound(this.ctx.loaders.of(ledgerLoaders).accountSetById, 'Account set', id);
  }

  list(page: PageArgs): Promise<Connection<AccountSet>> {
    return keysetPage(this.ctx.em, AccountSetSchema, { environmentId: this.ctx.environmentId }, page);
  }

  /** Creates a set over four existing, unbarred accounts of this environment; `none` is the default strategy. */
  async create(input: AccountSetCreateInput): Promise<AccountSet> {
    await this.checkAccounts(input);
    const accountSet = this.ctx.em.create(AccountSetSchema, {
      environmentId: this.ctx.environmentId,
      name: input.name ?? null,
      salesAccountId: input.salesAccountId,
      incomeAccountId: input.incomeAccountId,
      taxAccountId: input.taxAccountId,
      deferralAccountId: input.deferralAccountId,
      recognitionStrategy: input.recognitionStrategy ?? 'none',
    });
    await this.ctx.em.flush();
    return accountSet;
  }

  /** The ledger account in one role of the set (batched with the other roles and sets of the request). */
  async account(accountSet: AccountSet, role: AccountRole): Promise<LedgerAccount> {
    const account = await this.ctx.loaders.of(ledgerLoaders).accountById.load(accountSet[role]);
    // Composite foreign keys keep every account of a set in the set's environment.
    if (!account) throw new Error(`account set ${accountSet.id}: ${role} ${accountSet[role]} is missing`);
    return account;
  }

  /** All four accounts of the set, keyed by role (`salesAccount`, ...). */
  async accounts(accountSet: AccountSet): Promise<Record<AccountField, LedgerAccount>> {
    const accounts = await Promise.all(ACCOUNT_ROLES.map((role) => this.account(accountSet, role)));
    return Object.fromEntries(ACCOUNT_ROLES.map((role, i) => [accountField(role), accounts[i]])) as never;
  }

  private async checkAccounts(input: AccountSetCreateInput): Promise<void> {
    const accounts = await Promise.all(
      ACCOUNT_ROLES.map((role) => this.ctx.loaders.of(ledgerLoaders).accountById.load(input[role])),
    );
    const issues = ACCOUNT_ROLES.flatMap((role, index): FieldIssue[] => {
      const account = accounts[index];
      if (!account)
        return [{ path: [role], message: 'is not the id of a ledger account of this environment' }];
      if (account.barred) {
        return [{ path: [role], message: `names ledger account ${account.accountingCode}, which is barred` }];
      }
      return [];
    });
    if (issues.length > 0) {
      const detail = issues.map((issue) => `${issue.path[0]} ${issue.message}`).join('; ');
      throw new DomainError('INVALID_REFERENCE', detail, issues);
    }
  }
}
