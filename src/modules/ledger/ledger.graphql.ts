import { builder } from '../../graphql/builder.ts';
import { NodeRef, nodeType } from '../../graphql/node.ts';
import { payloadType, withUserErrors } from '../../graphql/user-errors.ts';
import { type AccountRole, type AccountSet, RECOGNITION_STRATEGIES } from './account-set.entity.ts';
import { AccountSetService } from './account-set.service.ts';
import { AccountSetCreateInput, LedgerAccountCreateInput, LedgerAccountUpdateInput } from './ledger.input.ts';
import { ledgerLoaders } from './ledger.reads.ts';
import type { LedgerAccount } from './ledger-account.entity.ts';
import { LedgerAccountService } from './ledger-account.service.ts';

export const RecognitionStrategyEnum = builder.enumType('RecognitionStrategy', {
  values: RECOGNITION_STRATEGIES,
});

export const LedgerAccountRef = builder.objectRef<LedgerAccount>('LedgerAccount').implement({
  interfaces: [NodeRef],
  fields: (t) => ({
    id: t.exposeID('id', { description: 'A UUID; the same id in REST.' }),
    name: t.exposeString('name'),
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
  interfaces: [NodeRef],
  fields: (t) => {
    const account = (role: AccountRole) =>
      t.field({
        type: LedgerAccountRef,
        resolve: (accountSet, _args, ctx) => new AccountSetService(ctx).account(accountSet, role),
      });
    return {
      id: t.exposeID('id', { description: 'A UUID; the same id in REST.' }),
      name: t.exposeString('name', { nullable: true }),
      salesAccount: account('salesAccountId'),
      incomeAccount: account('incomeAccountId'),
      taxAccount: account('taxAccountId'),
      deferralAccount: account('deferralAccountId'),
      revenueRecognitionStrategy: t.expose('recognitionStrategy', { type: RecognitionStrategyEnum }),
      createdAt: t.expose('createdAt', {
        type: 'DateTime',
        description: 'When it was created (ISO 8601, UTC).',
      }),
    };
  },
});

const LedgerAccountCreateInputRef = builder
  .inputType('LedgerAccountCreateInput', {
    fields: (t) => ({
      name: t.string({ required: true }),
      accountingCode: t.string({ required: true, description: 'Unique within the environment.' }),
      barred: t.boolean({ description: 'Defaults to false.' }),
    }),
  })
  .validate(LedgerAccountCreateInput);

const LedgerAccountUpdateInputRef = builder
  .inputType('LedgerAccountUpdateInput', {
    description: 'Fields left out stay as they are.',
    fields: (t) => ({
      name: t.string(),
      accountingCode: t.string(),
      barred: t.boolean(),
    }),
  })
  .validate(LedgerAccountUpdateInput);

const AccountSetCreateInputRef = builder
  .inputType('AccountSetCreateInput', {
    description: 'The four accounts must be unbarred ledger accounts of the environment.',
    fields: (t) => ({
      name: t.string(),
      salesAccountId: t.field({ type: 'UUID', required: true }),
      incomeAccountId: t.field({ type: 'UUID', required: true }),
      taxAccountId: t.field({ type: 'UUID', required: true }),
      deferralAccountId: t.field({ type: 'UUID', required: true }),
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
    type: LedgerAccountRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => ctx.loaders.of(ledgerLoaders).accountById.load(id),
  }),
  ledgerAccounts: t.connection(
    {
      type: LedgerAccountRef,
      resolve: (_root, args, ctx) => new LedgerAccountService(ctx).list(args),
    },
    { name: 'LedgerAccountConnection' },
    { name: 'LedgerAccountEdge' },
  ),
  accountSet: t.field({
    type: AccountSetRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => ctx.loaders.of(ledgerLoaders).accountSetById.load(id),
  }),
  accountSets: t.connection(
    {
      type: AccountSetRef,
      resolve: (_root, args, ctx) => new AccountSetService(ctx).list(args),
    },
    { name: 'AccountSetConnection' },
    { name: 'AccountSetEdge' },
  ),
}));

builder.mutationFields((t) => ({
  ledgerAccountCreate: t.field({
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
