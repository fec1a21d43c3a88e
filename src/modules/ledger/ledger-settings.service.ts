import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../../context.ts';
import { newId } from '../../db/ids.ts';
import { cachedRead } from '../../db/read-cache.ts';
import { DomainError, type FieldIssue } from '../../errors.ts';
import { ProductSchema } from '../product/product.entity.ts';
import { AccountSetSchema } from './account-set.entity.ts';
import { type LedgerSettings, LedgerSettingsSchema, ProductAccountSetSchema } from './journal.entity.ts';
import type { LedgerSettingsInput } from './ledger.input.ts';
import { LedgerAccountSchema } from './ledger-account.entity.ts';

/**
 * The chart an environment starts with, by accounting code. An environment that already has an
 * account with one of these codes keeps it, and it takes that role.
 */
const DEFAULT_ACCOUNTS = {
  receivable: { code: '1100', name: 'Accounts receivable' },
  cash: { code: '1000', name: 'Cash' },
  customerCredit: { code: '2300', name: 'Customer credit balances' },
  tax: { code: '2200', name: 'VAT payable' },
  deferral: { code: '2400', name: 'Deferred revenue' },
  sales: { code: '4000', name: 'Sales' },
  income: { code: '4100', name: 'Recognized revenue' },
} as const;

async function defaultAccount(tx: EntityManager, environmentId: string, code: string, name: string) {
  await tx.execute(
    `insert into ledger_account (id, environment_id, name, accounting_code, barred, created_at)
     values (?, ?, ?, ?, false, now()) on conflict (environment_id, accounting_code) do nothing`,
    [newId(), environmentId, name, code],
  );
  const [row] = await tx.execute<{ id: string }[]>(
    'select id from ledger_account where environment_id = ? and accounting_code = ?',
    [environmentId, code],
  );
  if (!row) throw new Error(`default ledger account ${code} is missing`);
  return row.id;
}

/**
 * The environment's ledger settings, made with the default chart the first time anything needs them
 * (a new environment, or one that existed before the ledger did). Runs inside the caller's transaction.
 */
export function ensureLedgerSettings(tx: EntityManager, environmentId: string): Promise<LedgerSettings> {
  return cachedRead(`ledger-settings:${environmentId}`, () => loadLedgerSettings(tx, environmentId));
}

async function loadLedgerSettings(tx: EntityManager, environmentId: string): Promise<LedgerSettings> {
  const found = await tx.findOne(LedgerSettingsSchema, { environmentId });
  if (found) return found;
  // Two first postings of one environment must not both create the chart.
  await tx.execute("select pg_advisory_xact_lock(hashtextextended('ledger-settings:' || ?, 0))", [
    environmentId,
  ]);
  const raced = await tx.findOne(LedgerSettingsSchema, { environmentId }, { refresh: true });
  if (raced) return raced;
  const ids: Record<string, string> = {};
  for (const [role, { code, name }] of Object.entries(DEFAULT_ACCOUNTS)) {
    ids[role] = await defaultAccount(tx, environmentId, code, name);
  }
  const accountSet = tx.create(AccountSetSchema, {
    environmentId,
    name: 'Default',
    salesAccountId: ids.sales as string,
    incomeAccountId: ids.income as string,
    taxAccountId: ids.tax as string,
    deferralAccountId: ids.deferral as string,
    recognitionStrategy: 'none',
  });
  // The settings row names the set by a plain column, so the unit of work must write the set first.
  await tx.flush();
  const settings = tx.create(LedgerSettingsSchema, {
    environmentId,
    defaultAccountSetId: accountSet.id,
    receivableAccountId: ids.receivable as string,
    cashAccountId: ids.cash as string,
    customerCreditAccountId: ids.customerCredit as string,
    updatedAt: null,
  });
  await tx.flush();
  return settings;
}

const SETTINGS_ACCOUNTS = ['receivableAccountId', 'cashAccountId', 'customerCreditAccountId'] as const;

/** Which accounts the environment and its products post to. */
export class LedgerSettingsService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  get(): Promise<LedgerSettings> {
    return this.ctx.em.transactional((tx) =>
      ensureLedgerSettings(tx as EntityManager, this.ctx.environmentId),
    );
  }

  /** Changes the fields given; each must name an unbarred account, or an account set, of this environment. */
  async update(input: LedgerSettingsInput): Promise<LedgerSettings> {
    const { environmentId } = this.ctx;
    return this.ctx.em.transactional(async (em) => {
      const tx = em as EntityManager;
      const settings = await ensureLedgerSettings(tx, environmentId);
      const issues: FieldIssue[] = [];
      for (const role of SETTINGS_ACCOUNTS) {
        const id = input[role];
        if (id === undefined) continue;
        const account = await tx.findOne(LedgerAccountSchema, { id, environmentId });
        if (!account)
          issues.push({ path: [role], message: 'is not the id of a ledger account of this environment' });
        else if (account.barred) {
          issues.push({
            path: [role],
            message: `names ledger account ${account.accountingCode}, which is barred`,
          });
        } else settings[role] = id;
      }
      if (input.defaultAccountSetId !== undefined) {
        const found = await tx.count(AccountSetSchema, { id: input.defaultAccountSetId, environmentId });
        if (!found) {
          issues.push({
            path: ['defaultAccountSetId'],
            message: 'is not the id of an account set of this environment',
          });
        } else settings.defaultAccountSetId = input.defaultAccountSetId;
      }
      if (issues.length > 0) {
        const detail = issues.map((issue) => `${issue.path[0]} ${issue.message}`).join('; ');
        throw new DomainError('INVALID_REFERENCE', detail, issues);
      }
      settings.updatedAt = new Date();
      await tx.flush();
      return settings;
    });
  }

  /** Points a product (and the invoice lines whose sku is its handle) at an account set, or back to the default. */
  async setProductAccountSet(productId: string, accountSetId: string | null): Promise<string | null> {
    const { environmentId } = this.ctx;
    return this.ctx.em.transactional(async (em) => {
      const tx = em as EntityManager;
      if (!(await tx.count(ProductSchema, { id: productId, environmentId }))) {
        throw DomainError.notFound('Product', productId);
      }
      await tx.nativeDelete(ProductAccountSetSchema, { productId, environmentId });
      if (accountSetId === null) return null;
      if (!(await tx.count(AccountSetSchema, { id: accountSetId, environmentId }))) {
        throw DomainError.onField(
          'INVALID_REFERENCE',
          ['accountSetId'],
          'is not the id of an account set of this environment',
        );
      }
      await tx.insert(ProductAccountSetSchema, { productId, environmentId, accountSetId });
      return accountSetId;
    });
  }

  async productAccountSetId(productId: string): Promise<string | null> {
    const row = await this.ctx.em.findOne(ProductAccountSetSchema, {
      productId,
      environmentId: this.ctx.environmentId,
    });
    return row?.accountSetId ?? null;
  }
}
