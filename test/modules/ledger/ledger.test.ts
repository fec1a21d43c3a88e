import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { AccountSetResponse } from '../../../src/modules/ledger/ledger.rest.ts';
import { createLedgerAccount, gql, mutate, pointers, text } from '../../support/catalog.ts';
import { expectProblem, setupTestApp, type TestEnvironment } from '../../support/harness.ts';

const t = setupTestApp();

const ACCOUNT_FIELDS = 'id name accountingCode barred';
const ACCOUNT_SET_FIELDS = `id name revenueRecognitionStrategy
  salesAccount { ${ACCOUNT_FIELDS} } taxAccount { ${ACCOUNT_FIELDS} }
  incomeAccount { ${ACCOUNT_FIELDS} } deferralAccount { ${ACCOUNT_FIELDS} }`;
const ROLES = ['salesAccountId', 'incomeAccountId', 'taxAccountId', 'deferralAccountId'] as const;

let env: TestEnvironment;
let other: TestEnvironment;
let counter = 0;
const uniqueCode = () => String(3000 + ++counter);

/** Four fresh unbarred accounts, as the ids of an account set body. */
async function fourAccounts(as = env) {
  const [sales, income, tax, deferral] = await Promise.all(
    ['Sales', 'Income', 'Tax', 'Deferral'].map((name) =>
      createLedgerAccount(t, as, { name, accountingCode: uniqueCode() }),
    ),
  );
  return {
    salesAccountId: sales.id,
    incomeAccountId: income.id,
    taxAccountId: tax.id,
    deferralAccountId: deferral.id,
  };
}

const post = (body: unknown) => t.rest('POST', '/accountsets', { env, body });

beforeAll(async () => {
  env = await t.createEnvironment('Main');
  other = await t.createEnvironment('Other');
});

describe('ledger accounts (GraphQL)', () => {
  const CREATE = `mutation($input: LedgerAccountCreateInput!) {
    ledgerAccountCreate(input: $input) { ledgerAccount { ${ACCOUNT_FIELDS} } userErrors { field code } } }`;
  const UPDATE = `mutation($id: UUID!, $input: LedgerAccountUpdateInput!) {
    ledgerAccountUpdate(id: $id, input: $input) { ledgerAccount { ${ACCOUNT_FIELDS} updatedAt } userErrors { field code } } }`;

  it('creates an account, unbarred unless said otherwise', async () => {
    const account = await createLedgerAccount(t, env, { name: 'Sales', accountingCode: '1000' });
    expect(account).toEqual({ id: expect.any(String), name: 'Sales', accountingCode: '1000', barred: false });
    const barred = await createLedgerAccount(t, env, { name: 'Old', accountingCode: '1001', barred: true });
    expect(barred.barred).toBe(true);
  });

  it('keeps accounting codes unique per environment', async () => {
    const accountingCode = uniqueCode();
    await createLedgerAccount(t, env, { name: 'First', accountingCode });
    const duplicate = await gql(t, env, CREATE, { input: { name: 'Second', accountingCode } });
    expect(duplicate.ledgerAccountCreate).toEqual({
      ledgerAccount: null,
      userErrors: [{ field: ['input', 'accountingCode'], code: 'DUPLICATE' }],
    });
    await expect(createLedgerAccount(t, other, { name: 'Elsewhere', accountingCode })).resolves.toBeTruthy();
  });

  it.each([
    ['name', text(250), true],
    ['name', text(251), false],
    ['name', '', false],
    ['accountingCode', text(64), true],
    ['accountingCode', text(65), false],
    ['accountingCode', ' ', false],
  ])('%s %j accepted: %s', async (field, value, accepted) => {
    const input = { name: 'Account', accountingCode: uniqueCode(), [field]: value };
    const response = await t.graphql(CREATE, { input }, { env });
    if (accepted) {
      expect(response.body.data.ledgerAccountCreate.ledgerAccount[field]).toBe(value);
    } else {
      expect(response.body.errors[0].extensions).toMatchObject({
        code: 'INVALID_INPUT',
        errors: [{ pointer: `/input/${field}` }],
      });
    }
  });

  it('updates the fields given, bars an account, and answers NOT_FOUND across environments', async () => {
    const account = await createLedgerAccount(t, env, { name: 'Before', accountingCode: uniqueCode() });

    const updated = (await gql(t, env, UPDATE, { id: account.id, input: { name: 'After', barred: true } }))
      .ledgerAccountUpdate;
    expect(updated.ledgerAccount).toMatchObject({
      name: 'After',
      accountingCode: account.accountingCode,
      barred: true,
    });
    expect(updated.ledgerAccount.updatedAt).not.toBeNull();

    const foreign = (await gql(t, other, UPDATE, { id: account.id, input: { barred: false } }))
      .ledgerAccountUpdate;
    expect(foreign).toEqual({ ledgerAccount: null, userErrors: [{ field: null, code: 'NOT_FOUND' }] });
  });

  it('lists the environment’s accounts only', async () => {
    const listed = await t.createEnvironment('Listed');
    await createLedgerAccount(t, listed, { name: 'Only', accountingCode: '1' });
    const data = await gql(t, listed, '{ ledgerAccounts { edges { node { name } } } }');
    expect(data.ledgerAccounts.edges).toEqual([{ node: { name: 'Only' } }]);
  });
});

describe('POST /accountsets', () => {
  it('answers 201 with a Location, the accounts embedded and the strategy as revenueRecognitionStrategy', async () => {
    // given
    const ids = await fourAccounts();

    // when
    const response = await post({ name: 'Default', ...ids, recognitionStrategy: 'daily_accrual' });

    // then
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/accountsets/${response.body.id}`);
    expect(AccountSetResponse.parse(response.body)).toEqual(response.body);
    const read = await t.rest('GET', response.headers.get('location') as string, { env });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(response.body);
    expect(response.body).toEqual({
      id: expect.any(String),
      name: 'Default',
      salesAccount: {
        id: ids.salesAccountId,
        name: 'Sales',
        accountingCode: expect.any(String),
        barred: false,
      },
      incomeAccount: {
        id: ids.incomeAccountId,
        name: 'Income',
        accountingCode: expect.any(String),
        barred: false,
      },
      taxAccount: { id: ids.taxAccountId, name: 'Tax', accountingCode: expect.any(String), barred: false },
      deferralAccount: {
        id: ids.deferralAccountId,
        name: 'Deferral',
        accountingCode: expect.any(String),
        barred: false,
      },
      revenueRecognitionStrategy: 'daily_accrual',
    });
    const [row] = await t.sql('select environment_id, recognition_strategy from account_set where id = $1', [
      response.body.id,
    ]);
    expect(row).toEqual({ environment_id: env.id, recognition_strategy: 'daily_accrual' });
  });

  it('defaults the strategy to none and takes a null name', async () => {
    const response = await post({ name: null, ...(await fourAccounts()) });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ name: null, revenueRecognitionStrategy: 'none' });
  });

  it('lets one account serve several roles', async () => {
    const account = await createLedgerAccount(t, env, { name: 'Everything', accountingCode: uniqueCode() });
    const ids = Object.fromEntries(ROLES.map((role) => [role, account.id]));
    expect((await post({ name: 'Simple', ...ids })).status).toBe(201);
  });

  it.each(['none', 'even_distribution', 'exact_daily_accrual', 'daily_accrual'])(
    'accepts the strategy %s',
    async (recognitionStrategy) => {
      const response = await post({ name: 'S', ...(await fourAccounts()), recognitionStrategy });
      expect(response.body.revenueRecognitionStrategy).toBe(recognitionStrategy);
    },
  );

  it('answers 400 naming each missing, malformed or unknown field', async () => {
    const ids = await fourAccounts();
    const { salesAccountId: _missing, ...withoutSales } = ids;
    expectProblem(await post({ ...withoutSales, name: 'x' }), 400);
    expect(pointers(await post({ ...withoutSales, name: 'x' }))).toEqual(['/salesAccountId']);
    expect(pointers(await post(ids))).toEqual(['/name']);
    expect(pointers(await post({ name: 'x', ...ids, taxAccountId: 'tax' }))).toEqual(['/taxAccountId']);
    expect(pointers(await post({ name: 'x', ...ids, recognitionStrategy: 'monthly' }))).toEqual([
      '/recognitionStrategy',
    ]);
    expect(pointers(await post({ name: 'x', ...ids, recognitionStrategy: null }))).toEqual([
      '/recognitionStrategy',
    ]);
    expect(pointers(await post({ name: text(251), ...ids }))).toEqual(['/name']);
    expect(pointers(await post({ name: 'x', ...ids, currency: 'EUR' }))).toEqual(['/currency']);
    expect((await post({ name: text(250), ...ids })).status).toBe(201);
  });

  it('ignores the read-only response fields sent back', async () => {
    const created = (await post({ name: 'Original', ...(await fourAccounts()) })).body;
    const ids = Object.fromEntries(
      ROLES.map((role) => [role, created[role.replace(/Id$/, '')].id as string]),
    );
    const echoed = await post({ ...created, ...ids, name: 'Copy' });
    expect(echoed.status).toBe(201);
    expect(echoed.body).toEqual({ ...created, id: echoed.body.id, name: 'Copy' });
  });

  it('answers 400 when the response name revenueRecognitionStrategy disagrees with recognitionStrategy', async () => {
    const ids = await fourAccounts();
    const agreeing = await post({
      name: 'x',
      ...ids,
      recognitionStrategy: 'daily_accrual',
      revenueRecognitionStrategy: 'daily_accrual',
    });
    expect(agreeing.status).toBe(201);
    const disagreeing = await post({ name: 'x', ...ids, revenueRecognitionStrategy: 'daily_accrual' });
    expectProblem(disagreeing, 400);
    expect(pointers(disagreeing)).toEqual(['/revenueRecognitionStrategy']);
    expect(disagreeing.body.detail).toMatch(/set recognitionStrategy instead/);
  });

  it('answers 422 naming each account that is unknown, of another environment, or barred', async () => {
    // given
    const ids = await fourAccounts();
    const foreign = await createLedgerAccount(t, other, { name: 'Foreign', accountingCode: uniqueCode() });
    const barred = await createLedgerAccount(t, env, {
      name: 'Barred',
      accountingCode: uniqueCode(),
      barred: true,
    });

    // when
    const response = await post({
      name: 'Broken',
      ...ids,
      incomeAccountId: randomUUID(),
      taxAccountId: foreign.id,
      deferralAccountId: barred.id,
    });

    // then
    expectProblem(response, 422);
    expect(response.body.errors).toEqual([
      { pointer: '/incomeAccountId', detail: 'is not the id of a ledger account of this environment' },
      { pointer: '/taxAccountId', detail: 'is not the id of a ledger account of this environment' },
      {
        pointer: '/deferralAccountId',
        detail: `names ledger account ${barred.accountingCode}, which is barred`,
      },
    ]);
    const [{ count }] = (await t.sql(
      "select count(*)::int as count from account_set where name = 'Broken'",
    )) as any;
    expect(count).toBe(0);
  });

  it('keeps a set whose account is barred afterwards', async () => {
    const created = (await post({ name: 'Kept', ...(await fourAccounts()) })).body;
    await mutate(t, env, 'ledgerAccountUpdate', 'barred', {
      id: created.salesAccount.id,
      input: { barred: true },
    });
    const data = await gql(t, env, 'query($id: UUID!) { accountSet(id: $id) { salesAccount { barred } } }', {
      id: created.id,
    });
    expect(data.accountSet.salesAccount.barred).toBe(true);
  });
});

describe('account sets (GraphQL)', () => {
  const CREATE = `mutation($input: AccountSetCreateInput!) {
    accountSetCreate(input: $input) { accountSet { ${ACCOUNT_SET_FIELDS} } userErrors { field code message } } }`;
  const READ = `query($id: UUID!) { accountSet(id: $id) { ${ACCOUNT_SET_FIELDS} } }`;

  it('reads a set created through REST exactly as REST answered it', async () => {
    const created = (
      await post({ name: 'Parity', ...(await fourAccounts()), recognitionStrategy: 'even_distribution' })
    ).body;
    expect((await gql(t, env, READ, { id: created.id })).accountSet).toEqual(created);
  });

  it('creates a set (name optional) that reads the same as a REST response would', async () => {
    const ids = await fourAccounts();
    const result = (await gql(t, env, CREATE, { input: ids })).accountSetCreate;
    expect(result.userErrors).toEqual([]);
    expect(AccountSetResponse.parse(result.accountSet)).toMatchObject({
      name: null,
      revenueRecognitionStrategy: 'none',
    });
    expect(result.accountSet.salesAccount.id).toBe(ids.salesAccountId);
  });

  it('reports unusable accounts as INVALID_REFERENCE userErrors', async () => {
    const ids = await fourAccounts();
    const foreign = await createLedgerAccount(t, other, { name: 'Foreign', accountingCode: uniqueCode() });
    const result = (await gql(t, env, CREATE, { input: { ...ids, salesAccountId: foreign.id } }))
      .accountSetCreate;
    expect(result).toMatchObject({
      accountSet: null,
      userErrors: [{ field: ['input', 'salesAccountId'], code: 'INVALID_REFERENCE' }],
    });
  });

  it('lists the environment’s sets only, loading their accounts in batches', async () => {
    const listed = await t.createEnvironment('Listed');
    const ids = await fourAccounts(listed);
    await mutate(t, listed, 'accountSetCreate', 'id', { input: { ...ids, name: 'One' } });
    await mutate(t, listed, 'accountSetCreate', 'id', { input: { ...ids, name: 'Two' } });

    const data = await gql(t, listed, `{ accountSets { edges { node { name salesAccount { id } } } } }`);
    expect(data.accountSets.edges).toEqual([
      { node: { name: 'One', salesAccount: { id: ids.salesAccountId } } },
      { node: { name: 'Two', salesAccount: { id: ids.salesAccountId } } },
    ]);
    expect((await gql(t, other, READ, { id: ids.salesAccountId })).accountSet).toBeNull();
  });
});
