import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createProduct, createTaxCode, gql, text } from '../../support/catalog.ts';
import { setupTestApp, type TestEnvironment } from '../../support/harness.ts';

const t = setupTestApp();

const CREATE = `mutation($input: TaxCodeCreateInput!) {
  taxCodeCreate(input: $input) { taxCode { id code rate description } userErrors { field code message } } }`;
const UPDATE = `mutation($id: UUID!, $input: TaxCodeUpdateInput!) {
  taxCodeUpdate(id: $id, input: $input) { taxCode { id code rate description updatedAt } userErrors { field code message } } }`;

let env: TestEnvironment;
let other: TestEnvironment;
let counter = 0;
const uniqueCode = () => `TC-${++counter}`;

beforeAll(async () => {
  env = await t.createEnvironment('Main');
  other = await t.createEnvironment('Other');
});

/** The INVALID_INPUT pointers of a failed operation. */
async function invalidPointers(query: string, variables: Record<string, unknown>): Promise<string[]> {
  const response = await t.graphql(query, variables, { env });
  expect(response.body.errors?.[0]?.extensions?.code).toBe('INVALID_INPUT');
  return response.body.errors[0].extensions.errors.map((error: { pointer: string }) => error.pointer);
}

describe('taxCodeCreate', () => {
  it('creates a tax code, stored as an exact decimal', async () => {
    const created = await createTaxCode(t, env, {
      code: 'VAT-REDUCED',
      rate: 7.5,
      description: 'Reduced rate',
    });
    expect(created).toMatchObject({ code: 'VAT-REDUCED', rate: 7.5, description: 'Reduced rate' });
    const [row] = await t.sql('select rate::text as rate, environment_id from tax_code where id = $1', [
      created.id,
    ]);
    expect(row).toEqual({ rate: '7.5000', environment_id: env.id });
  });

  it.each([
    [0, true],
    [100, true],
    [0.0001, true],
    [19.1234, true],
    [99.9999, true],
    [-0.0001, false],
    [100.0001, false],
    [19.12345, false],
    [101, false],
  ])('rate %s accepted: %s', async (rate, accepted) => {
    const input = { code: uniqueCode(), rate };
    if (accepted) {
      expect((await createTaxCode(t, env, input)).rate).toBe(rate);
    } else {
      expect(await invalidPointers(CREATE, { input })).toEqual(['/input/rate']);
    }
  });

  it.each([
    ['code', text(64), true],
    ['code', text(65), false],
    ['code', ' ', false],
    ['description', text(500), true],
    ['description', text(501), false],
  ])('%s of %j characters accepted: %s', async (field, value, accepted) => {
    const input = { code: uniqueCode(), rate: 10, [field]: value };
    if (accepted) {
      expect((await createTaxCode(t, env, input))[field]).toBe(value);
    } else {
      expect(await invalidPointers(CREATE, { input })).toEqual([`/input/${field}`]);
    }
  });

  it('keeps codes unique per environment', async () => {
    const code = uniqueCode();
    await createTaxCode(t, env, { code, rate: 10 });

    const duplicate = await gql(t, env, CREATE, { input: { code, rate: 20 } });
    expect(duplicate.taxCodeCreate).toMatchObject({
      taxCode: null,
      userErrors: [{ field: ['input', 'code'], code: 'DUPLICATE' }],
    });
    await expect(createTaxCode(t, other, { code, rate: 20 })).resolves.toMatchObject({ code, rate: 20 });
  });
});

describe('taxCodeUpdate', () => {
  it('changes rate and description; products keep referring to the code', async () => {
    // given
    const code = uniqueCode();
    const created = await createTaxCode(t, env, { code, rate: 25, description: 'Standard' });
    await createProduct(t, env, { name: 'Taxed', taxCode: code });

    // when
    const updated = (await gql(t, env, UPDATE, { id: created.id, input: { rate: 24 } })).taxCodeUpdate;
    const cleared = (await gql(t, env, UPDATE, { id: created.id, input: { description: null } }))
      .taxCodeUpdate;

    // then
    expect(updated).toMatchObject({ taxCode: { code, rate: 24, description: 'Standard' }, userErrors: [] });
    expect(updated.taxCode.updatedAt).not.toBeNull();
    expect(cleared.taxCode).toMatchObject({ rate: 24, description: null });
  });

  it('has no way to change the code', async () => {
    const created = await createTaxCode(t, env, { code: uniqueCode(), rate: 1 });
    const response = await t.graphql(UPDATE, { id: created.id, input: { code: 'NEW' } }, { env });
    expect(response.body.errors[0].message).toMatch(/"code" is not defined by type "TaxCodeUpdateInput"/);
  });

  it('validates the rate as on creation', async () => {
    const created = await createTaxCode(t, env, { code: uniqueCode(), rate: 1 });
    expect(await invalidPointers(UPDATE, { id: created.id, input: { rate: 100.5 } })).toEqual([
      '/input/rate',
    ]);
  });

  it('answers NOT_FOUND for another environment’s tax code or an unknown id', async () => {
    const foreign = await createTaxCode(t, other, { code: uniqueCode(), rate: 1 });
    for (const id of [foreign.id, randomUUID()]) {
      const result = (await gql(t, env, UPDATE, { id, input: { rate: 2 } })).taxCodeUpdate;
      expect(result).toMatchObject({ taxCode: null, userErrors: [{ code: 'NOT_FOUND' }] });
    }
  });
});

describe('taxCodes and taxCode(code)', () => {
  it('list and find only the environment’s tax codes', async () => {
    const listed = await t.createEnvironment('Listed');
    await createTaxCode(t, listed, { code: 'A', rate: 1 });
    await createTaxCode(t, listed, { code: 'B', rate: 2 });
    await createTaxCode(t, other, { code: 'C', rate: 3 });

    const data = await gql(t, listed, '{ taxCodes { edges { node { code rate } } } }');
    expect(data.taxCodes.edges.map((edge: any) => edge.node)).toEqual([
      { code: 'A', rate: 1 },
      { code: 'B', rate: 2 },
    ]);
    const find = 'query($code: String!) { taxCode(code: $code) { code rate } }';
    expect((await gql(t, listed, find, { code: 'B' })).taxCode).toEqual({ code: 'B', rate: 2 });
    expect((await gql(t, listed, find, { code: 'C' })).taxCode).toBeNull();
  });
});
