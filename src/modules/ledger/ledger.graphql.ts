import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { NodeRef, nodeType } from '../../graphql/node.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import { type AccountRole, type AccountSet, RECOGNITION_STRATEGIES } from './account-set.entity.ts';
import { AccountSetService } from './account-set.service.ts';
import { AccountSetCreateInput, LedgerAccountCreateInput, LedgerAccountUpdateInput } from './ledger.input.ts';
import { ledgerLoaders } from './ledger.reads.ts';
import type { LedgerAccount } from './ledger-account.entity.ts';
import { LedgerAccountService } from './ledger-account.service.ts';

export const RecognitionStrategyEnum = builder.enumType('RecognitionStrategy', {
  description: 'How revenue of an account set’s lines is recognised over their service period.',
  values: describedValues(RECOGNITION_STRATEGIES, {
    none: 'All of it when the invoice is booked; no deferral.',
    even_distribution: 'Equal shares, one per month counted from the period start.',
    exact_daily_accrual: 'One share per day of the period.',
    daily_accrual: 'Per calendar month, by its days in the period.',
  }),
});

export const LedgerAccountRef = builder.objectRef<LedgerAccount>('LedgerAccount').implement({
  description: 'An account of the ledger (chart of accounts).',
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'A UUID; the same id in REST.' }),
    name: t.exposeString('name', { description: 'The account’s name.' }),
    accountingCode: t.exposeString('accountingCode', { description: 'Unique within the environment.' }),
    barred: t.exposeBoolean('barred', { description: 'A barred account cannot be put in new account sets.' }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it last changed (ISO 8601, UTC); null if it never changed.',
    }),
  }),
});

export const AccountSetRef = builder.objectRef<AccountSet>('AccountSet').implement({
  description: 'Which ledger accounts an invoice line posts to, and how its revenue is recognised.',
  interfaces: [NodeRef],
  fields: (t) => {
    const account = (role: AccountRole, description: string) =>
      t.field({
        type: LedgerAccountRef,
        description,
        resolve: (accountSet, _args, ctx) => new AccountSetService(ctx).account(accountSet, role),
      });
    return {
      id: t.exposeID('id', { description: 'A UUID; the same id in REST.' }),
      name: t.exposeString('name', { nullable: true, description: 'A name for people; null when none.' }),
      salesAccount: account('salesAccountId', 'Where net sales are posted when booked (strategy none).'),
      incomeAccount: account('incomeAccountId', 'Where deferred revenue is posted as it is recognised.'),
      taxAccount: account('taxAccountId', 'Where the tax of invoice lines is posted.'),
      deferralAccount: account(
        'deferralAccountId',
        'Where net sales wait until recognised (deferred revenue).',
      ),
      revenueRecognitionStrategy: t.expose('recognitionStrategy', {
        type: RecognitionStrategyEnum,
        description: 'How revenue of its lines is recognised.',
      }),
      createdAt: t.expose('createdAt', {
        type: 'DateTime',
        description: 'When it was created (ISO 8601, UTC).',
      }),
    };
  },
});

const LedgerAccountCreateInputRef = builder
  .inputType('LedgerAccountCreateInput', {
    description: 'A new ledger account.',
    fields: (t) => ({
      name: t.string({ required: true, description: 'The account’s name.' }),
      accountingCode: t.string({ required: true, description: 'Unique within the environment.' }),
      barred: t.boolean({ description: 'Defaults to false.' }),
    }),
  })
  .validate(LedgerAccountCreateInput);

const LedgerAccountUpdateInputRef = builder
  .inputType('LedgerAccountUpdateInput', {
    description: 'Fields left out stay as they are.',
    fields: (t) => ({
      name: t.string({ description: 'A new name.' }),
      accountingCode: t.string({ description: 'A new accounting code (unique within the environment).' }),
      barred: t.boolean({ description: 'Whether the account is barred from new account sets.' }),
    }),
  })
  .validate(LedgerAccountUpdateInput);

const AccountSetCreateInputRef = builder
  .inputType('AccountSetCreateInput', {
    description: 'The four accounts must be unbarred ledger accounts of the environment.',
    fields: (t) => ({
      name: t.string({ description: 'A name for people.' }),
      salesAccountId: t.field({ type: 'UUID', required: true, description: 'The sales account’s id.' }),
      incomeAccountId: t.field({ type: 'UUID', required: true, description: 'The income account’s id.' }),
      taxAccountId: t.field({ type: 'UUID', required: true, description: 'The tax account’s id.' }),
      deferralAccountId: t.field({ type: 'UUID', required: true, description: 'The deferral account’s id.' }),
      recognitionStrategy: t.field({
        type: RecognitionStrategyEnum,
        description: 'Defaults to none; read back as revenueRecognitionStrategy.',
      }),
    }),
  })
  .validate(AccountSetCreateInput);

const LedgerAccountCreatePayload = payloadType(
  'LedgerAccountCreatePayload',
  'ledgerAccount',
  LedgerAccountRef,
);
const LedgerAccountUpdatePayload = payloadType(
  'LedgerAccountUpdatePayload',
  'ledgerAccount',
  LedgerAccountRef,
);
const AccountSetCreatePayload = payloadType('AccountSetCreatePayload', 'accountSet', AccountSetRef);

builder.queryFields((t) => ({
  ledgerAccount: t.field({
    description: 'The ledger account with this id; null when this environment has none.',
    type: LedgerAccountRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => ctx.loaders.of(ledgerLoaders).accountById.load(id),
  }),
  ledgerAccounts: t.connection(
    {
      description: 'The ledger accounts of this environment.',
      type: LedgerAccountRef,
      resolve: (_root, args, ctx) => new LedgerAccountService(ctx).list(args),
    },
    { name: 'LedgerAccountConnection' },
    { name: 'LedgerAccountEdge' },
  ),
  accountSet: t.field({
    description: 'The account set with this id; null when this environment has none.',
    type: AccountSetRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => ctx.loaders.of(ledgerLoaders).accountSetById.load(id),
  }),
  accountSets: t.connection(
    {
      description: 'The account sets of this environment.',
      type: AccountSetRef,
      resolve: (_root, args, ctx) => new AccountSetService(ctx).list(args),
    },
    { name: 'AccountSetConnection' },
    { name: 'AccountSetEdge' },
  ),
}));

builder.mutationFields((t) => ({
  ledgerAccountCreate: t.field({
    description: 'Creates a ledger account.',
    type: LedgerAccountCreatePayload,
    args: {
      input: t.arg({
        type: LedgerAccountCreateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('ledgerAccount', () => new LedgerAccountService(ctx).create(input)),
  }),
  ledgerAccountUpdate: t.field({
    description: 'Changes a ledger account.',
    type: LedgerAccountUpdatePayload,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }),
      input: t.arg({
        type: LedgerAccountUpdateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('ledgerAccount', () => new LedgerAccountService(ctx).update(id, input)),
  }),
  accountSetCreate: t.field({
    description: 'Creates an account set.',
    type: AccountSetCreatePayload,
    args: {
      input: t.arg({
        type: AccountSetCreateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { input }, ctx) =>
      withUserErrors('accountSet', () => new AccountSetService(ctx).create(input)),
  }),
}));

nodeType('LedgerAccount', (ctx, id) => ctx.loaders.of(ledgerLoaders).accountById.load(id));

nodeType('AccountSet', (ctx, id) => ctx.loaders.of(ledgerLoaders).accountSetById.load(id));
