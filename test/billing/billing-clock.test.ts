import { beforeAll, describe, expect, it } from 'vitest';
import { CLOCK_SKEW_MS } from '../../src/modules/billing/billing.clock.ts';
import { billingFixtures } from '../subscription/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = billingFixtures(t);

const RUN = `mutation ($asOf: DateTime) { billingRunCreate(asOf: $asOf) {
  billingRun { status periodCount } userErrors { field message code } } }`;

/** An environment of `kind` with a customer on a monthly subscription since January 2026. */
async function subscribedEnvironment(kind: 'live' | 'test'): Promise<TestEnvironment> {
  const env = await t.createEnvironment(kind, { kind });
  const product = await f.createProduct(env, { handle: 'seats' });
  const price = await f.createPrice(env, { pricing: { eur: { amount: 1000 } } });
  const customerId = await f.createCustomer(env);
  await f.subscribe(env, {
    customerId,
    term: { start: '2026-01-01' },
    items: [{ productId: product.id, priceId: price.id }],
  });
  return env;
}

const billed = async (env: TestEnvironment) =>
  (
    await t.sql<{ runs: number; periods: number; invoices: number }>(
      `select (select count(*) from billing_run where environment_id = $1)::int as runs,
              (select count(*) from billed_period where environment_id = $1)::int as periods,
              (select count(*) from invoice where environment_id = $1)::int as invoices`,
      [env.id],
    )
  )[0];

describe('billing runs ahead of now', () => {
  let live: TestEnvironment;
  let test: TestEnvironment;

  beforeAll(async () => {
    live = await subscribedEnvironment('live');
    test = await subscribedEnvironment('test');
  });

  it('are refused in a live environment, and bill nothing', async () => {
    const response = await t.graphql(RUN, { asOf: '2999-01-01T00:00:00.000Z' }, { env: live });

    expect(response.body.data.billingRunCreate).toEqual({
      billingRun: null,
      userErrors: [
        {
          field: null,
          code: 'INVALID_INPUT',
          message:
            'asOf 2999-01-01T00:00:00.000Z is later than now: a live environment bills nothing ahead of time; ' +
            'simulate time in a test environment',
        },
      ],
    });
    expect(await billed(live)).toEqual({ runs: 0, periods: 0, invoices: 0 });
  });

  it('run in a live environment within the allowed clock skew', async () => {
    const asOf = new Date(Date.now() + CLOCK_SKEW_MS / 2).toISOString();
    const response = await t.graphql(RUN, { asOf }, { env: live });

    expect(response.body.data.billingRunCreate.userErrors).toEqual([]);
    expect(response.body.data.billingRunCreate.billingRun.status).toBe('succeeded');
  });

  it('run in a test environment, whose clock may be anywhere', async () => {
    const environment = await t.graphql('{ environment { kind } }', {}, { env: test });
    expect(environment.body.data).toEqual({ environment: { kind: 'test' } });

    const response = await t.graphql(RUN, { asOf: '2030-01-01T00:00:00.000Z' }, { env: test });

    expect(response.body.data.billingRunCreate).toEqual({
      billingRun: { status: 'succeeded', periodCount: 49 },
      userErrors: [],
    });
    expect(await billed(test)).toMatchObject({ runs: 1, periods: 49, invoices: 1 });
  });
});
