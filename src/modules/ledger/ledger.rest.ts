import { z } from 'zod';
import type { RequestContext } from '../../context.ts';
import { listRoute } from '../../rest/list.ts';
import type { Route } from '../../rest/router.ts';
import { parseInput, withoutReadOnly } from '../../validation.ts';
import { type AccountSet, RECOGNITION_STRATEGIES } from './account-set.entity.ts';
import { AccountSetService } from './account-set.service.ts';
import { ACCOUNT_SET_READ_ONLY_FIELDS, AccountSetCreateBody } from './ledger.input.ts';
import type { LedgerAccount } from './ledger-account.entity.ts';

/** Contract 2.7, "Account". */
export const AccountResponse = z.strictObject({
  id: z.uuid(),
  name: z.string(),
  accountingCode: z.string(),
  barred: z.boolean(),
});

/** Contract 2.7: the accounts embedded, the strategy under its response name. */
export const AccountSetResponse = z.strictObject({
  id: z.uuid(),
  name: z.string().nullable(),
  salesAccount: AccountResponse,
  taxAccount: AccountResponse,
  incomeAccount: AccountResponse,
  deferralAccount: AccountResponse,
  revenueRecognitionStrategy: z.enum(RECOGNITION_STRATEGIES),
});

const accountResponse = (account: LedgerAccount): z.infer<typeof AccountResponse> => ({
  id: account.id,
  name: account.name,
  accountingCode: account.accountingCode,
  barred: account.barred,
});

export async function accountSetResponse(
  ctx: RequestContext,
  accountSet: AccountSet,
): Promise<z.infer<typeof AccountSetResponse>> {
  const accounts = await new AccountSetService(ctx).accounts(accountSet);
  return {
    id: accountSet.id,
    name: accountSet.name ?? null,
    salesAccount: accountResponse(accounts.salesAccount),
    taxAccount: accountResponse(accounts.taxAccount),
    incomeAccount: accountResponse(accounts.incomeAccount),
    deferralAccount: accountResponse(accounts.deferralAccount),
    revenueRecognitionStrategy: accountSet.recognitionStrategy,
  };
}

export const ledgerRoutes: Route[] = [
  {
    method: 'POST',
    path: '/accountsets',
    summary: 'Create an account set over four unbarred ledger accounts',
    body: AccountSetCreateBody,
    response: {
      status: 201,
      description: 'Created; Location names the new account set',
      schema: AccountSetResponse,
    },
    handler: async ({ ctx, body }) => {
      const input = parseInput(AccountSetCreateBody, withoutReadOnly(body, ACCOUNT_SET_READ_ONLY_FIELDS));
      const accountSet = await new AccountSetService(ctx).create(input);
      return {
        status: 201,
        body: await accountSetResponse(ctx, accountSet),
        headers: { location: `/accountsets/${accountSet.id}` },
      };
    },
  },
  {
    // Beyond the contract: the address POST /accountsets names in Location answers.
    method: 'GET',
    path: '/accountsets/{accountSetId}',
    summary: 'Read an account set',
    response: { status: 200, description: 'The account set', schema: AccountSetResponse },
    handler: async ({ ctx, params }) => {
      const accountSet = await new AccountSetService(ctx).get(params.accountSetId as string);
      return { status: 200, body: await accountSetResponse(ctx, accountSet) };
    },
  },
  listRoute({
    path: '/accountsets',
    what: 'account sets',
    item: AccountSetResponse,
    list: (ctx, page) => new AccountSetService(ctx).list(page),
    respond: (ctx, accountSets) => Promise.all(accountSets.map((set) => accountSetResponse(ctx, set))),
  }),
];
