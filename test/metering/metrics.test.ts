import { beforeAll, describe, expect, it } from 'vitest';
import { billingFixtures } from '../subscription/fixtures.ts';
import { gql } from '../support/catalog.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { METRIC_FIELDS, meteringFixtures } from './fixtures.ts';

const t = setupTestApp();
const billing = billingFixtures(t);
const metering = meteringFixtures(t);

let env: TestEnvironment;

beforeAll(async () => {
  env = await t.createEnvironment('Metrics');
});

const update = async (id: string, input: Record<string, unknown>) =>
  (
    await gql(
      t,
      env,
      `mutation ($id: UUID!, $input: BillableMetricUpdateInput!) {
        billableMetricUpdate(id: $id, input: $input) { billableMetric { ${METRIC_FIELDS} } userErrors { field message code } } }`,
      { id, input },
    )
  ).billableMetricUpdate;

describe('billable metrics', () => {
  it('are created with their defaults, listed, read and changed', async () => {
    const metric = await metering.createMetric(env, {
      code: 'api.calls',
      name: 'API calls',
      aggregation: 'count',
      filters: { region: 'eu' },
    });
    expect(metric).toMatchObject({
      code: 'api.calls',
      name: 'API calls',
      aggregation: 'count',
      fieldName: null,
      filters: { region: 'eu' },
      rounding: 'none',
      roundingDecimals: 0,
      updatedAt: null,
    });
    const changed = await update(metric.id, {
      name: 'Calls',
      filters: null,
      rounding: 'floor',
      roundingDecimals: 2,
    });
    expect(changed.userErrors).toEqual([]);
    expect(changed.billableMetric).toMatchObject({
      name: 'Calls',
      filters: {},
      rounding: 'floor',
      roundingDecimals: 2,
    });
    const data = await gql(
      t,
      env,
      `query ($id: UUID!) { billableMetric(id: $id) { code name } billableMetrics(first: 10) { edges { node { code } } } }`,
      { id: metric.id },
    );
    expect(data.billableMetric).toEqual({ code: 'api.calls', name: 'Calls' });
    expect(data.billableMetrics.edges.map((edge: { node: { code: string } }) => edge.node.code)).toContain(
      'api.calls',
    );
  });

  it('refuses with coded userErrors: a taken code, a missing field, bad codes and roundings, an unknown id', async () => {
    await metering.createMetric(env, { code: 'gb', aggregation: 'sum', fieldName: 'gb' });
    const taken = await metering.tryCreateMetric(env, {
      code: 'gb',
      name: 'GB',
      aggregation: 'max',
      fieldName: 'gb',
    });
    expect(taken.userErrors).toEqual([
      { field: ['input', 'code'], message: expect.any(String), code: 'DUPLICATE' },
    ]);
    // Malformed input is refused before the service, as a coded error naming each field.
    const invalid = async (input: Record<string, unknown>) => {
      const response = await t.graphql(
        `mutation ($input: BillableMetricCreateInput!) { billableMetricCreate(input: $input) { userErrors { code } } }`,
        { input },
        { env },
      );
      expect(response.body.errors[0].extensions.code).toBe('INVALID_INPUT');
      return response.body.errors[0].extensions.errors
        .map((error: { pointer: string }) => error.pointer)
        .sort();
    };
    expect(await invalid({ code: 'x', name: 'X', aggregation: 'sum' })).toEqual(['/input/fieldName']);
    expect(
      await invalid({
        code: 'with space',
        name: 'X',
        aggregation: 'count',
        roundingDecimals: 7,
        filters: { region: 1 },
      }),
    ).toEqual(['/input/code', '/input/filters/region', '/input/roundingDecimals']);
    const unknown = await update('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', { name: 'Y' });
    expect(unknown.userErrors[0]).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('are billed by an item only at an event-based price, named by an existing code', async () => {
    await metering.createMetric(env, { code: 'seats', aggregation: 'weighted_sum', fieldName: 'delta' });
    const customerId = await billing.createCustomer(env);
    const product = await billing.createProduct(env);
    const advance = await billing.createPrice(env, { pricing: { eur: { amount: 100 } } });
    const usage = await billing.createPrice(env, {
      method: 'event_based',
      pricing: { eur: { amount: 100 } },
    });
    const input = (priceId: string, metricCode: string) => ({
      customerId,
      term: { start: '2026-01-01' },
      items: [{ productId: product.id, priceId, metricCode }],
    });
    const wrongPrice = await billing.trySubscribe(env, input(advance.id, 'seats'));
    expect(wrongPrice.userErrors).toEqual([
      {
        field: ['input', 'items', '0', 'metricCode'],
        message: expect.any(String),
        code: 'INVALID_REFERENCE',
      },
    ]);
    const unknown = await billing.trySubscribe(env, input(usage.id, 'nope'));
    expect(unknown.userErrors[0]).toMatchObject({
      field: ['input', 'items', '0', 'metricCode'],
      code: 'INVALID_REFERENCE',
    });
    const other = await t.createEnvironment('Other');
    await metering.createMetric(other, { code: 'other-only', aggregation: 'count' });
    const foreign = await billing.trySubscribe(env, input(usage.id, 'other-only'));
    expect(foreign.userErrors[0]).toMatchObject({ code: 'INVALID_REFERENCE' });
    const ok = await billing.trySubscribe(env, input(usage.id, 'seats'));
    expect(ok.userErrors).toEqual([]);
    const read = await gql(
      t,
      env,
      `query ($id: UUID!) { subscription(id: $id) { items { metric { code aggregation } } } }`,
      { id: ok.subscription.id },
    );
    expect(read.subscription.items[0].metric).toEqual({ code: 'seats', aggregation: 'weighted_sum' });
  });
});
