import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();

describe('REST collections beyond the contract', () => {
  let env: TestEnvironment;
  let other: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment('Lists');
    other = await t.createEnvironment('Elsewhere');
  });

  it('POST /customers creates a customer whose Location reads it back, refusing bad fields and duplicates', async () => {
    const created = await t.rest('POST', '/customers', {
      env,
      body: { name: 'Ada', handle: 'ada', currency: 'eur', billingAddress: { city: 'London' } },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Ada',
      handle: 'ada',
      currency: 'EUR',
      collectionMode: 'send_invoice',
      billingAddress: { city: 'London', street1: null },
    });
    const location = created.headers.get('location') as string;
    expect(location).toBe(`/customers/${created.body.id}`);
    expect((await t.rest('GET', location, { env })).body).toEqual(created.body);

    const invalid = await t.rest('POST', '/customers', { env, body: { name: '', paymentTerm: 'soon' } });
    expectProblem(invalid, 400);
    expect(invalid.body.errors.map((error: { pointer: string }) => error.pointer).sort()).toEqual([
      '/name',
      '/paymentTerm',
    ]);
    const duplicate = await t.rest('POST', '/customers', { env, body: { name: 'Ada 2', handle: 'ada' } });
    expectProblem(duplicate, 409);
    const [row] = await t.sql('select count(*)::int as n from customer where environment_id = $1', [env.id]);
    expect(row).toEqual({ n: 1 });
  });

  it('GET /customers pages forwards in creation order, in the environment only', async () => {
    for (const name of ['B', 'C', 'D', 'E']) {
      expect((await t.rest('POST', '/customers', { env, body: { name } })).status).toBe(201);
    }
    await t.rest('POST', '/customers', { env: other, body: { name: 'Not mine' } });

    const names: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const query: string = after ? `?limit=2&after=${after}` : '?limit=2';
      const page = await t.rest('GET', `/customers${query}`, { env });
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      names.push(...page.body.data.map((customer: { name: string }) => customer.name));
      after = page.body.nextCursor;
      pages++;
    } while (after);
    expect(names).toEqual(['Ada', 'B', 'C', 'D', 'E']);
    expect(pages).toBe(3);
  });

  it('refuses a limit out of range and a cursor that is not one, naming the parameter', async () => {
    for (const [query, pointer] of [
      ['?limit=0', '/limit'],
      ['?limit=101', '/limit'],
      ['?limit=x', '/limit'],
      ['?after=nonsense', '/after'],
      ['?page=2', '/page'],
    ]) {
      const response = await t.rest('GET', `/customers${query}`, { env });
      expectProblem(response, 400);
      expect(response.body.errors.map((error: { pointer: string }) => error.pointer)).toEqual([pointer]);
    }
  });

  it.each(['/products', '/prices', '/accountsets', '/subscriptions', '/invoices'])(
    'GET %s answers a page of the environment (empty here) with a null nextCursor',
    async (path) => {
      const response = await t.rest('GET', path, { env: other });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: [], nextCursor: null });
    },
  );
});
