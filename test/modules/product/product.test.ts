import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRequestContext } from '../../../src/context.ts';
import { inEnvironment } from '../../../src/db/tenant-transaction.ts';
import { ProductResponse } from '../../../src/modules/product/product.rest.ts';
import { ProductService } from '../../../src/modules/product/product.service.ts';
import { createProduct, createTaxCode, gql, pointers, text } from '../../support/catalog.ts';
import { expectProblem, setupTestApp, type TestEnvironment } from '../../support/harness.ts';

const t = setupTestApp();

const PRODUCT_FIELDS = 'id name handle description taxCode createdAt updatedAt';
let env: TestEnvironment;
let other: TestEnvironment;
let counter = 0;
const uniqueHandle = () => `sku-${++counter}`;

beforeAll(async () => {
  env = await t.createEnvironment('Main');
  other = await t.createEnvironment('Other');
  await createTaxCode(t, env, { code: 'VAT25', rate: 25 });
  await createTaxCode(t, env, { code: 'VAT7', rate: 7.5 });
  await createTaxCode(t, other, { code: 'ELSEWHERE', rate: 10 });
});

const patch = (id: string, body: unknown, as = env) => t.rest('PATCH', `/products/${id}`, { env: as, body });

describe('GraphQL products', () => {
  it('creates a product and reads it back by id and in the list', async () => {
    // when
    const created = await createProduct(t, env, {
      name: 'API calls',
      handle: 'api-calls',
      description: 'Metered',
      taxCode: 'VAT25',
    });

    // then
    expect(created).toMatchObject({
      name: 'API calls',
      handle: 'api-calls',
      description: 'Metered',
      taxCode: 'VAT25',
      updatedAt: null,
    });
    const data = await gql(t, env, `query($id: UUID!) { product(id: $id) { ${PRODUCT_FIELDS} } }`, {
      id: created.id,
    });
    expect(data.product).toEqual(created);
    const [row] = await t.sql('select environment_id, tax_code from product where id = $1', [created.id]);
    expect(row).toEqual({ environment_id: env.id, tax_code: 'VAT25' });
  });

  it('pages through the environment’s products only, in creation order', async () => {
    // given
    const pager = await t.createEnvironment('Pager');
    const names = ['A', 'B', 'C'];
    for (const name of names) await createProduct(t, pager, { name });
    await createProduct(t, other, { name: 'not listed' });
    const query = `query($after: String) { products(first: 2, after: $after) {
      edges { node { name } } pageInfo { hasNextPage endCursor } } }`;

    // when
    const first = (await gql(t, pager, query)).products;
    const second = (await gql(t, pager, query, { after: first.pageInfo.endCursor })).products;

    // then
    expect(first.edges.map((edge: any) => edge.node.name)).toEqual(['A', 'B']);
    expect(first.pageInfo.hasNextPage).toBe(true);
    expect(second.edges.map((edge: any) => edge.node.name)).toEqual(['C']);
    expect(second.pageInfo.hasNextPage).toBe(false);
  });

  it('reports a duplicate handle and an unknown tax code as userErrors', async () => {
    const handle = uniqueHandle();
    await createProduct(t, env, { name: 'First', handle });
    const mutation = `mutation($input: ProductCreateInput!) {
      productCreate(input: $input) { product { id } userErrors { field code message } } }`;

    const duplicate = await gql(t, env, mutation, { input: { name: 'Second', handle } });
    expect(duplicate.productCreate).toMatchObject({
      product: null,
      userErrors: [{ field: ['input', 'handle'], code: 'DUPLICATE' }],
    });

    const unknownTax = await gql(t, env, mutation, { input: { name: 'Third', taxCode: 'ELSEWHERE' } });
    expect(unknownTax.productCreate).toMatchObject({
      product: null,
      userErrors: [{ field: ['input', 'taxCode'], code: 'INVALID_REFERENCE' }],
    });
  });

  it('allows the same handle in another environment', async () => {
    const handle = uniqueHandle();
    await createProduct(t, env, { name: 'Here', handle });
    await expect(createProduct(t, other, { name: 'There', handle })).resolves.toMatchObject({ handle });
  });

  it('rejects invalid input with the field named', async () => {
    const response = await t.graphql(
      'mutation($input: ProductCreateInput!) { productCreate(input: $input) { product { id } } }',
      { input: { name: text(251) } },
      { env },
    );
    expect(response.body.errors[0].extensions).toMatchObject({
      code: 'INVALID_INPUT',
      errors: [{ pointer: '/input/name', detail: 'must be at most 250 characters long' }],
    });
  });

  it('does not see another environment’s products', async () => {
    const foreign = await createProduct(t, other, { name: 'Foreign' });
    const data = await gql(t, env, 'query($id: UUID!) { product(id: $id) { id } }', { id: foreign.id });
    expect(data.product).toBeNull();
    const update = await gql(
      t,
      env,
      `mutation($id: UUID!) { productUpdate(id: $id, input: { name: "Mine" }) { product { id } userErrors { code } } }`,
      { id: foreign.id },
    );
    expect(update.productUpdate).toEqual({ product: null, userErrors: [{ code: 'NOT_FOUND' }] });
  });
});

describe('ProductService.findByHandle (what invoicing calls)', () => {
  it('finds a product of the environment by handle, and nothing of another environment', async () => {
    const handle = uniqueHandle();
    const created = await createProduct(t, env, { name: 'By handle', handle });
    const findByHandle = (environmentId: string) =>
      inEnvironment(t.orm.em, environmentId, (em) =>
        new ProductService(createRequestContext(em, environmentId, {} as never)).findByHandle(handle),
      );

    expect((await findByHandle(env.id))?.id).toBe(created.id);
    expect(await findByHandle(other.id)).toBeNull();
  });
});

describe('PATCH /products/{productId}', () => {
  let productId: string;

  beforeAll(async () => {
    productId = (await createProduct(t, env, { name: 'Seats', handle: uniqueHandle(), taxCode: 'VAT25' })).id;
  });

  it('updates name, handle, description and taxCode and answers exactly contract 2.9', async () => {
    // when
    const response = await patch(productId, {
      name: 'Seats (annual)',
      handle: 'seats-annual',
      description: 'Per seat',
      taxCode: 'VAT7',
    });

    // then
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(
      ['createdAt', 'description', 'handle', 'id', 'name', 'taxCode', 'updatedAt'].sort(),
    );
    expect(ProductResponse.parse(response.body)).toMatchObject({
      id: productId,
      name: 'Seats (annual)',
      handle: 'seats-annual',
      description: 'Per seat',
      taxCode: 'VAT7',
    });
    expect(response.body.updatedAt).not.toBeNull();
    const [row] = await t.sql('select name, handle, tax_code from product where id = $1', [productId]);
    expect(row).toEqual({ name: 'Seats (annual)', handle: 'seats-annual', tax_code: 'VAT7' });
  });

  it('keeps absent fields and clears those sent as null', async () => {
    // given
    await patch(productId, { description: 'kept', handle: 'kept-handle', taxCode: 'VAT25' });

    // when
    const keep = await patch(productId, { name: 'Renamed' });
    const clear = await patch(productId, { handle: null, description: null, taxCode: null });

    // then
    expect(keep.body).toMatchObject({
      name: 'Renamed',
      description: 'kept',
      handle: 'kept-handle',
      taxCode: 'VAT25',
    });
    expect(clear.body).toMatchObject({ name: 'Renamed', description: null, handle: null, taxCode: null });
  });

  it('accepts an empty body as a no-op update', async () => {
    const response = await patch(productId, {});
    expect(response.status).toBe(200);
    expect(response.body.name).toBe('Renamed');
  });

  describe('name: 1 to 250 characters, never cleared', () => {
    it.each([
      ['1 character', 'n', 200],
      ['250 characters', text(250), 200],
      ['250 characters outside the BMP (code points, as PostgreSQL counts)', text(250, '🚀'), 200],
      ['251 characters', text(251), 400],
      ['an empty string', '', 400],
      ['only spaces', '   ', 400],
      ['null', null, 400],
      ['a number', 42, 400],
    ])('%s → %s', async (_case, name, status) => {
      const response = await patch(productId, { name });
      expect(response.status).toBe(status);
      if (status === 400) {
        expectProblem(response, 400);
        expect(pointers(response)).toEqual(['/name']);
      } else {
        expect(response.body.name).toBe(name);
      }
    });
  });

  it.each([
    ['handle', 250, 251],
    ['description', 4000, 4001],
    ['taxCode', undefined, 65],
  ])('limits %s (longest accepted %s, shortest refused %s)', async (field, longest, tooLong) => {
    if (longest !== undefined) {
      expect((await patch(productId, { [field]: text(longest) })).status).toBe(200);
    }
    const refused = await patch(productId, { [field]: text(tooLong) });
    expectProblem(refused, 400);
    expect(pointers(refused)).toEqual([`/${field}`]);
  });

  it('answers 409 for a handle another product of the environment has', async () => {
    const taken = uniqueHandle();
    await createProduct(t, env, { name: 'Holder', handle: taken });
    const response = await patch(productId, { handle: taken });
    expectProblem(response, 409);
    expect(pointers(response)).toEqual(['/handle']);
  });

  it('answers 422 for a tax code the environment does not have, even one another environment has', async () => {
    for (const taxCode of ['NOPE', 'ELSEWHERE']) {
      const response = await patch(productId, { taxCode });
      expectProblem(response, 422);
      expect(pointers(response)).toEqual(['/taxCode']);
    }
  });

  it('keeps keys that are no product field as metadata (the contract allows any), and ignores the read-only ones', async () => {
    // other keys: kept as metadata, read back through GraphQL; null removes one
    const kept = await patch(productId, { name: 'X', sku: 'a', price: 3, tags: ['b2b'], toString: 0 });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    expect(kept.body).not.toHaveProperty('sku');
    const metadataOf = async () =>
      (await gql(t, env, 'query($id: UUID!) { product(id: $id) { metadata } }', { id: productId })).product
        .metadata;
    expect(await metadataOf()).toEqual({ sku: 'a', price: 3, tags: ['b2b'], toString: 0 });
    expect((await patch(productId, { price: null, toString: null, sku: 'c' })).status).toBe(200);
    expect(await metadataOf()).toEqual({ sku: 'c', tags: ['b2b'] });

    // limits: a key over 40 characters, a value over 500 characters as JSON, more than 50 keys in all
    const refused = await patch(productId, { [text(41)]: 1, big: text(600) });
    expectProblem(refused, 400);
    expect(pointers(refused)?.sort()).toEqual(['/big', `/${text(41)}`].sort());
    const many = Object.fromEntries(Array.from({ length: 49 }, (_, i) => [`k${i}`, i]));
    const tooMany = await patch(productId, many);
    expectProblem(tooMany, 400);
    expect(tooMany.body.detail).toMatch(/at most 50 metadata keys; this change would leave 51/);
    expect(await metadataOf()).toEqual({ sku: 'c', tags: ['b2b'] });

    // read-only: echoing a response back is fine
    const before = (await patch(productId, {})).body;
    const echoed = await patch(productId, {
      ...before,
      id: randomUUID(),
      createdAt: 'yesterday',
      name: 'Echoed',
    });
    expect(echoed.status).toBe(200);
    expect(echoed.body).toMatchObject({ id: productId, createdAt: before.createdAt, name: 'Echoed' });
  });

  it('answers 400 for a body that is not a JSON object, 415 for another content type', async () => {
    expectProblem(await patch(productId, ['name']), 400);
    expectProblem(await t.rest('PATCH', `/products/${productId}`, { env, rawBody: '{"name":' }), 400);
    expectProblem(
      await t.rest('PATCH', `/products/${productId}`, {
        env,
        rawBody: 'name=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
    );
  });

  it('answers 404 for an unknown id and for another environment’s product, 400 for a non-UUID', async () => {
    const foreign = await createProduct(t, other, { name: 'Foreign' });
    expectProblem(await patch(foreign.id, { name: 'Mine now' }), 404);
    expectProblem(await patch(randomUUID(), { name: 'Nobody' }), 404);
    expectProblem(await patch('not-a-uuid', { name: 'Nobody' }), 400);
    const [row] = await t.sql('select name from product where id = $1', [foreign.id]);
    expect(row?.name).toBe('Foreign');
  });

  it('answers 405 with Allow for other methods', async () => {
    const response = await t.rest('GET', `/products/${productId}`, { env });
    expectProblem(response, 405);
    expect(response.headers.get('allow')).toBe('PATCH');
  });

  it('reads the same on both faces', async () => {
    // given a product created through GraphQL and patched through REST
    const created = await createProduct(t, env, { name: 'Parity', handle: uniqueHandle() });
    const patched = (await patch(created.id, { description: 'via REST', taxCode: 'VAT7' })).body;

    // when read through GraphQL
    const data = await gql(t, env, `query($id: UUID!) { product(id: $id) { ${PRODUCT_FIELDS} } }`, {
      id: created.id,
    });

    // then
    expect(data.product).toEqual(patched);
  });
});
