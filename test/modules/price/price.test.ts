import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { PriceResponse } from '../../../src/modules/price/price.rest.ts';
import { gql, pointers, text } from '../../support/catalog.ts';
import {
  expectProblem,
  setupTestApp,
  type TestEnvironment,
  type TestResponse,
} from '../../support/harness.ts';

const t = setupTestApp();

const PRICE_FIELDS = 'id name description priceModel purchase termCount termUnit pricing';
const RESPONSE_KEYS = [
  'description',
  'id',
  'name',
  'priceModel',
  'pricing',
  'purchase',
  'termCount',
  'termUnit',
];

let env: TestEnvironment;
let other: TestEnvironment;

beforeAll(async () => {
  env = await t.createEnvironment('Main');
  other = await t.createEnvironment('Other');
});

const validPrice = (overrides: Record<string, unknown> = {}) => ({
  name: 'Pro monthly',
  termUnit: 'month',
  termCount: 1,
  purchase: 'recurring',
  priceModel: 'fee',
  method: 'advance',
  description: 'Internal note',
  pricing: { eur: { amount: 1999 }, jpy: { amount: 300 } },
  ...overrides,
});

const post = (body: unknown, as = env) => t.rest('POST', '/prices', { env: as, body });
const put = (id: string, body: unknown, as = env) => t.rest('PUT', `/prices/${id}`, { env: as, body });

async function createPrice(body: Record<string, unknown> = validPrice(), as = env): Promise<any> {
  const response = await post(body, as);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

function expectInvalid(response: TestResponse, expected: string[]) {
  expectProblem(response, 400);
  expect(pointers(response)).toEqual(expected);
}

const tiers = [
  { upTo: 10, unitAmount: 500, flatAmount: 0 },
  { upTo: null, unitAmount: 400 },
];

/** The documented entry of each price model (DESIGN §7). */
const ENTRIES = {
  fee: { amount: 1999 },
  volume: { tiers },
  graduated: {
    tiers: [
      { upTo: 10, unitAmount: 500, flatAmount: 1000 },
      { upTo: 100, unitAmount: 400 },
      { upTo: null, unitAmount: 0.25 },
    ],
  },
  package: { amount: 1000, packageSize: 100 },
};

describe('POST /prices', () => {
  it('answers 201 with a Location and exactly the fields of contract 2.8 (no method)', async () => {
    // when
    const response = await post(validPrice());

    // then
    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(RESPONSE_KEYS);
    expect(PriceResponse.parse(response.body)).toEqual({
      id: expect.any(String),
      name: 'Pro monthly',
      description: 'Internal note',
      priceModel: 'fee',
      purchase: 'recurring',
      termCount: 1,
      termUnit: 'month',
      pricing: { eur: { amount: 1999 }, jpy: { amount: 300 } },
    });
    expect(response.headers.get('location')).toBe(`/prices/${response.body.id}`);
    const read = await t.rest('GET', response.headers.get('location') as string, { env });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(response.body);
    const [row] = await t.sql('select environment_id, method, pricing from price where id = $1', [
      response.body.id,
    ]);
    expect(row).toEqual({ environment_id: env.id, method: 'advance', pricing: response.body.pricing });
  });

  it('defaults a missing description to null and missing pricing to {}', async () => {
    const { description: _d, pricing: _p, ...minimal } = validPrice();
    const created = await createPrice(minimal);
    expect(created).toMatchObject({ description: null, pricing: {} });
  });

  it.each(Object.entries(ENTRIES))('round-trips a %s entry as sent', async (priceModel, entry) => {
    const created = await createPrice(validPrice({ priceModel, pricing: { usd: entry, kwd: entry } }));
    expect(created.pricing).toEqual({ usd: entry, kwd: entry });
  });

  it('names every failing field at once', async () => {
    const response = await post({
      ...validPrice({ name: '', termCount: 0, termUnit: 'months' }),
      currency: 'EUR',
    });
    expectInvalid(response, ['/name', '/termUnit', '/termCount', '/currency']);
  });

  it('ignores the read-only id and names unknown fields', async () => {
    const id = randomUUID();
    const created = await createPrice({ ...validPrice(), id });
    expect(created.id).not.toBe(id);
    expectInvalid(await post({ ...validPrice(), amount: 5, taxCode: 'VAT' }), ['/amount', '/taxCode']);
  });

  it.each(['name', 'termUnit', 'termCount', 'purchase', 'priceModel', 'method'])(
    'requires %s',
    async (field) => {
      const { [field as 'name']: _omitted, ...body } = validPrice();
      expectInvalid(await post(body), [`/${field}`]);
    },
  );

  it('refuses a "__proto__" pricing key rather than dropping it, and stores nothing', async () => {
    const body = JSON.stringify(validPrice()).replace('"pricing":{', '"pricing":{"__proto__":{"amount":1},');
    expect(body).toContain('__proto__');
    const before = await t.sql('select count(*)::int as n from price where environment_id = $1', [env.id]);
    const response = await t.rest('POST', '/prices', { env, rawBody: body });
    expectProblem(response, 400);
    expect(response.body.errors).toEqual([
      { pointer: '/pricing/__proto__', detail: expect.stringMatching(/reserved/) },
    ]);
    const after = await t.sql('select count(*)::int as n from price where environment_id = $1', [env.id]);
    expect(after).toEqual(before);
  });

  it('reads a price at the Location it was created under (beyond the contract), and 405 for DELETE', async () => {
    const created = await createPrice();
    const read = await t.rest('GET', `/prices/${created.id}`, { env });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created);
    const other = await t.createEnvironment('Other');
    expectProblem(await t.rest('GET', `/prices/${created.id}`, { env: other }), 404);
    const response = await t.rest('DELETE', `/prices/${created.id}`, { env });
    expectProblem(response, 405);
    expect(response.headers.get('allow')).toBe('GET, PUT, HEAD');
  });
});

/** The same limits hold when creating and when replacing. */
describe.each([
  ['POST /prices', (body: unknown) => post(body)],
  ['PUT /prices/{priceId}', async (body: unknown) => put((await createPrice()).id, body)],
] as const)('%s limits', (_operation, send) => {
  it.each([
    ['name', '1 character', 'n', true],
    ['name', '250 characters', text(250), true],
    ['name', '250 astral characters', text(250, '😀'), true],
    ['name', '251 characters', text(251), false],
    ['name', 'empty', '', false],
    ['name', 'blank', '  ', false],
    ['name', 'null', null, false],
    ['description', '4000 characters', text(4000), true],
    ['description', '4001 characters', text(4001), false],
    ['description', 'null', null, true],
    ['description', 'empty', '', true],
    ['termCount', '1', 1, true],
    ['termCount', '10000', 10_000, true],
    ['termCount', '0', 0, false],
    ['termCount', '10001', 10_001, false],
    ['termCount', '-1', -1, false],
    ['termCount', 'fractional', 1.5, false],
    ['termCount', 'a string', '5', false],
    ['termUnit', 'day', 'day', true],
    ['termUnit', 'week', 'week', true],
    ['termUnit', 'year', 'year', true],
    ['termUnit', 'plural', 'months', false],
    ['termUnit', 'uppercase', 'MONTH', false],
    ['priceModel', 'unknown', 'tiered', false],
    ['pricing', 'an array', [], false],
    ['pricing', 'a string', 'eur', false],
  ])('%s %s: accepted %s', async (field, _case, value, accepted) => {
    const response = await send(validPrice({ [field]: value }));
    if (accepted) {
      expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
      expect(response.body[field]).toEqual(typeof value === 'string' ? value.trim() : value);
    } else {
      expectInvalid(response, [`/${field}`]);
    }
  });

  it.each([
    ['EUR', /must be written in lowercase: "eur"/],
    ['Eur', /must be written in lowercase: "eur"/],
    ['xyz', /"xyz" is not a lowercase ISO 4217 code of a supported currency/],
    ['euro', /"euro" is not a lowercase ISO 4217 code/],
    ['', /"" is not a lowercase ISO 4217 code/],
  ])('refuses the pricing key %j and says why', async (key, message) => {
    const response = await send(validPrice({ pricing: { eur: { amount: 1 }, [key]: { amount: 1 } } }));
    expectInvalid(response, [`/pricing/${key}`]);
    expect(response.body.errors[0].detail).toMatch(message);
  });

  describe('pricing entries, shaped by priceModel', () => {
    it.each([
      ['fee', { amount: 0 }, []],
      ['fee', { amount: 0.25 }, []],
      ['fee', { amount: 0.000000000001 }, []],
      ['fee', { amount: 0.0000000000001 }, ['/pricing/eur/amount']],
      ['fee', { amount: -1 }, ['/pricing/eur/amount']],
      ['fee', { amount: '1999' }, ['/pricing/eur/amount']],
      ['fee', {}, ['/pricing/eur/amount']],
      ['fee', { amount: 1, currency: 'eur' }, ['/pricing/eur/currency']],
      ['fee', { tiers }, ['/pricing/eur/amount', '/pricing/eur/tiers']],
      ['fee', 1999, ['/pricing/eur']],
      ['volume', { tiers: [{ upTo: null, unitAmount: 1 }] }, []],
      ['volume', { tiers: [] }, ['/pricing/eur/tiers']],
      [
        'volume',
        {
          tiers: [
            { upTo: 10, unitAmount: 1 },
            { upTo: 10, unitAmount: 1 },
            { upTo: null, unitAmount: 1 },
          ],
        },
        ['/pricing/eur/tiers/1/upTo'],
      ],
      [
        'volume',
        {
          tiers: [
            { upTo: 10, unitAmount: 1 },
            { upTo: 9, unitAmount: 1 },
            { upTo: null, unitAmount: 1 },
          ],
        },
        ['/pricing/eur/tiers/1/upTo'],
      ],
      [
        'volume',
        {
          tiers: [
            { upTo: 10, unitAmount: 1 },
            { upTo: 11, unitAmount: 1 },
            { upTo: null, unitAmount: 1 },
          ],
        },
        [],
      ],
      [
        'volume',
        {
          tiers: [
            { upTo: null, unitAmount: 1 },
            { upTo: null, unitAmount: 1 },
          ],
        },
        ['/pricing/eur/tiers/0/upTo'],
      ],
      ['volume', { tiers: [{ upTo: 10, unitAmount: 1 }] }, ['/pricing/eur/tiers/0/upTo']],
      [
        'volume',
        {
          tiers: [
            { upTo: 0, unitAmount: 1 },
            { upTo: null, unitAmount: 1 },
          ],
        },
        ['/pricing/eur/tiers/0/upTo'],
      ],
      [
        'volume',
        {
          tiers: [
            { upTo: 1.5, unitAmount: 1 },
            { upTo: null, unitAmount: 1 },
          ],
        },
        ['/pricing/eur/tiers/0/upTo'],
      ],
      ['volume', { tiers: [{ unitAmount: 1 }] }, ['/pricing/eur/tiers/0/upTo']],
      ['volume', { tiers: [{ upTo: null, unitAmount: -1 }] }, ['/pricing/eur/tiers/0/unitAmount']],
      ['volume', { tiers: [{ upTo: null }] }, ['/pricing/eur/tiers/0/unitAmount']],
      [
        'volume',
        { tiers: [{ upTo: null, unitAmount: 1, flatAmount: -1 }] },
        ['/pricing/eur/tiers/0/flatAmount'],
      ],
      [
        'volume',
        { tiers: [{ upTo: null, unitAmount: 1, flatAmount: 0.5 }] },
        ['/pricing/eur/tiers/0/flatAmount'],
      ],
      ['volume', { tiers: [{ upTo: null, unitAmount: 1, discount: 1 }] }, ['/pricing/eur/tiers/0/discount']],
      [
        'graduated',
        {
          tiers: [
            { upTo: 5, unitAmount: 0, flatAmount: 0 },
            { upTo: null, unitAmount: 0 },
          ],
        },
        [],
      ],
      ['graduated', { amount: 5 }, ['/pricing/eur/tiers', '/pricing/eur/amount']],
      [
        'graduated',
        {
          tiers: [
            { upTo: 5, unitAmount: 1 },
            { upTo: 3, unitAmount: 1 },
            { upTo: null, unitAmount: 1 },
          ],
        },
        ['/pricing/eur/tiers/1/upTo'],
      ],
      ['package', { amount: 0, packageSize: 1 }, []],
      ['package', { amount: 1000, packageSize: 0 }, ['/pricing/eur/packageSize']],
      ['package', { amount: 1000, packageSize: -100 }, ['/pricing/eur/packageSize']],
      ['package', { amount: 1000, packageSize: 2.5 }, ['/pricing/eur/packageSize']],
      ['package', { amount: -1, packageSize: 100 }, ['/pricing/eur/amount']],
      ['package', { amount: 10.5, packageSize: 100 }, ['/pricing/eur/amount']],
      ['package', { amount: 1000 }, ['/pricing/eur/packageSize']],
    ])('%s %j → %j', async (priceModel, entry, failing) => {
      const response = await send(validPrice({ priceModel, pricing: { eur: entry } }));
      if (failing.length === 0) {
        expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
        expect(response.body.pricing).toEqual({ eur: entry });
      } else {
        expectInvalid(response, failing);
      }
    });
  });
});

describe('PUT /prices/{priceId}', () => {
  it('replaces name, termUnit, termCount, priceModel, description and pricing', async () => {
    // given
    const created = await createPrice();
    const replacement = {
      name: 'Pro yearly, volume',
      termUnit: 'year',
      termCount: 2,
      priceModel: 'volume',
      description: 'Replaced',
      pricing: { usd: ENTRIES.volume },
    };

    // when
    const response = await put(created.id, replacement);

    // then
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(RESPONSE_KEYS);
    expect(response.body).toEqual({ id: created.id, purchase: 'recurring', ...replacement });
    const [row] = await t.sql('select method, updated_at from price where id = $1', [created.id]);
    expect(row?.method).toBe('advance');
    expect(row?.updated_at).toBeInstanceOf(Date);
  });

  it('clears a description and pricing left out (a PUT is a full replacement)', async () => {
    const created = await createPrice();
    const response = await put(created.id, {
      name: 'Bare',
      termUnit: 'month',
      termCount: 1,
      priceModel: 'fee',
    });
    expect(response.body).toMatchObject({ description: null, pricing: {} });
  });

  it('checks the pricing against the new model', async () => {
    const created = await createPrice();
    const response = await put(created.id, { ...validPrice({ priceModel: 'package' }) });
    expectInvalid(response, ['/pricing/eur/packageSize', '/pricing/jpy/packageSize']);
  });

  it.each([
    ['purchase', 'one_time', /fixed at creation \(recurring\)/],
    ['method', 'arrears', /fixed at creation \(advance\)/],
  ])('answers 400 when %s differs from the stored one', async (field, value, message) => {
    const created = await createPrice();
    const response = await put(created.id, validPrice({ [field]: value }));
    expectInvalid(response, [`/${field}`]);
    expect(response.body.detail).toMatch(message);
    const [row] = await t.sql(`select name, ${field} from price where id = $1`, [created.id]);
    expect(row?.[field]).not.toBe(value);
  });

  it('accepts purchase and method equal to the stored ones and changes nothing with them', async () => {
    const created = await createPrice(validPrice({ purchase: 'one_time', method: 'event_based' }));
    const response = await put(
      created.id,
      validPrice({ purchase: 'one_time', method: 'event_based', name: 'Same' }),
    );
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ name: 'Same', purchase: 'one_time' });
  });

  it('ignores the read-only id, refuses unknown fields', async () => {
    const created = await createPrice();
    const echoed = await put(created.id, { ...created, id: randomUUID(), name: 'Echo' });
    expect(echoed.status).toBe(200);
    expect(echoed.body).toEqual({ ...created, name: 'Echo' });
    expectInvalid(await put(created.id, { ...validPrice(), createdAt: 'now' }), ['/createdAt']);
  });

  it('answers 404 for an unknown id or another environment’s price, 400 for a non-UUID', async () => {
    const foreign = await createPrice(validPrice(), other);
    expectProblem(await put(foreign.id, validPrice({ name: 'Mine' })), 404);
    expectProblem(await put(randomUUID(), validPrice()), 404);
    expectProblem(await put('price-1', validPrice()), 400);
    const [row] = await t.sql('select name from price where id = $1', [foreign.id]);
    expect(row?.name).toBe('Pro monthly');
  });
});

describe('GraphQL prices', () => {
  const CREATE = `mutation($input: PriceCreateInput!) {
    priceCreate(input: $input) { price { ${PRICE_FIELDS} method } userErrors { field code message } } }`;
  const UPDATE = `mutation($id: UUID!, $input: PriceUpdateInput!) {
    priceUpdate(id: $id, input: $input) { price { ${PRICE_FIELDS} method } userErrors { field code message } } }`;
  const READ = `query($id: UUID!) { price(id: $id) { ${PRICE_FIELDS} } }`;

  it('creates a price that REST then replaces, and both faces read the same', async () => {
    // given a price created through GraphQL
    const created = (await gql(t, env, CREATE, { input: validPrice({ method: 'arrears' }) })).priceCreate;
    expect(created.userErrors).toEqual([]);
    expect(created.price.method).toBe('arrears');

    // when REST replaces it
    const replaced = await put(created.price.id, validPrice({ name: 'Via REST', method: 'arrears' }));

    // then GraphQL reads what REST answered
    expect(replaced.status).toBe(200);
    expect((await gql(t, env, READ, { id: created.price.id })).price).toEqual(replaced.body);
  });

  it('reads a price created through REST exactly as REST answered it', async () => {
    const created = await createPrice(
      validPrice({ priceModel: 'graduated', pricing: { eur: ENTRIES.graduated } }),
    );
    expect((await gql(t, env, READ, { id: created.id })).price).toEqual(created);
  });

  it('replaces through priceUpdate, whose input has no purchase or method', async () => {
    const { price } = (await gql(t, env, CREATE, { input: validPrice() })).priceCreate;
    const input = {
      name: 'Updated',
      termUnit: 'week',
      termCount: 2,
      priceModel: 'package',
      pricing: { eur: ENTRIES.package },
    };

    const updated = (await gql(t, env, UPDATE, { id: price.id, input })).priceUpdate;
    expect(updated).toEqual({
      price: { ...price, ...input, description: null },
      userErrors: [],
    });

    const withPurchase = await t.graphql(
      UPDATE,
      { id: price.id, input: { ...input, purchase: 'one_time' } },
      { env },
    );
    expect(withPurchase.body.errors[0].message).toMatch(
      /"purchase" is not defined by type "PriceUpdateInput"/,
    );
  });

  it('reports invalid input with one pointer per field', async () => {
    const response = await t.graphql(
      CREATE,
      { input: validPrice({ termCount: 10_001, pricing: { EUR: { amount: -1 } } }) },
      { env },
    );
    expect(response.body.errors[0].extensions).toMatchObject({
      code: 'INVALID_INPUT',
      errors: [
        { pointer: '/input/termCount' },
        { pointer: '/input/pricing/EUR' },
        { pointer: '/input/pricing/EUR/amount' },
      ],
    });
  });

  it('lists the environment’s prices only and reports an unknown id as NOT_FOUND', async () => {
    const pager = await t.createEnvironment('Pager');
    const mine = await createPrice(validPrice({ name: 'Mine' }), pager);
    const foreign = await createPrice(validPrice({ name: 'Foreign' }), other);

    const list = await gql(t, pager, '{ prices(first: 100) { edges { node { id name } } } }');
    expect(list.prices.edges).toEqual([{ node: { id: mine.id, name: 'Mine' } }]);
    expect((await gql(t, pager, READ, { id: foreign.id })).price).toBeNull();

    const { name, termUnit, termCount, priceModel } = validPrice();
    const update = await gql(t, pager, UPDATE, {
      id: foreign.id,
      input: { name, termUnit, termCount, priceModel },
    });
    expect(update.priceUpdate).toMatchObject({ price: null, userErrors: [{ code: 'NOT_FOUND' }] });
  });

  it('reads pricing as typed entries for every model, the same amounts as the JSON', async () => {
    const ENTRIES_READ = `query ($id: UUID!) { price(id: $id) { pricingEntries {
      currency amount packageSize tiers { upTo unitAmount flatAmount } } } }`;
    const read = async (priceModel: keyof typeof ENTRIES, pricing: Record<string, unknown>) => {
      const created = await createPrice(validPrice({ priceModel, pricing }));
      return (await gql(t, env, ENTRIES_READ, { id: created.id })).price.pricingEntries;
    };
    expect(await read('fee', { usd: { amount: 0.25 }, eur: { amount: 1999 } })).toEqual([
      { currency: 'eur', amount: 1999, packageSize: null, tiers: null },
      { currency: 'usd', amount: 0.25, packageSize: null, tiers: null },
    ]);
    expect(await read('package', { eur: ENTRIES.package })).toEqual([
      { currency: 'eur', amount: 1000, packageSize: 100, tiers: null },
    ]);
    expect(await read('graduated', { eur: ENTRIES.graduated })).toEqual([
      {
        currency: 'eur',
        amount: null,
        packageSize: null,
        tiers: [
          { upTo: 10, unitAmount: 500, flatAmount: 1000 },
          { upTo: 100, unitAmount: 400, flatAmount: null },
          { upTo: null, unitAmount: 0.25, flatAmount: null },
        ],
      },
    ]);
    expect(await read('volume', {})).toEqual([]);
  });
});
