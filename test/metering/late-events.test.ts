import { beforeAll, describe, expect, it } from 'vitest';
import { billingFixtures } from '../subscription/fixtures.ts';
import { gql } from '../support/catalog.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { meteringFixtures, txn } from './fixtures.ts';

const t = setupTestApp();
const billing = billingFixtures(t);
const metering = meteringFixtures(t);

/** 1.00 EUR per GB, monthly in arrears from 2026-01-01. */
async function meteredCustomer(env: TestEnvironment) {
  const customer = await billing.createCustomer(env);
  const product = await billing.createProduct(env, { name: 'Storage' });
  const price = await billing.createPrice(env, {
    name: 'Per GB',
    method: 'event_based',
    pricing: { eur: { amount: 100 } },
  });
  await metering.createMetric(env, { code: 'gb', aggregation: 'sum', fieldName: 'gb' });
  const subscription = await billing.subscribe(env, {
    customerId: customer,
    term: { start: '2026-01-01' },
    items: [{ productId: product.id, priceId: price.id, metricCode: 'gb' }],
  });
  const send = async (timestamp: string, gb: number) =>
    (
      await metering.ingestOk(env, [
        { transactionId: txn(), customer, metric: 'gb', timestamp, properties: { gb } },
      ])
    ).results[0];
  return { customer, itemId: subscription.items[0].id as string, send };
}

const settingsUpdate = async (env: TestEnvironment, input: Record<string, unknown>) => {
  const data = await gql(
    t,
    env,
    `mutation ($input: MeteringSettingsUpdateInput!) { meteringSettingsUpdate(input: $input) {
      meteringSettings { lateEvents gracePeriodHours } userErrors { code } } }`,
    { input },
  );
  expect(data.meteringSettingsUpdate.userErrors).toEqual([]);
  return data.meteringSettingsUpdate.meteringSettings;
};

type Line = { amount: number; periodStart: string; description: string };

describe('late events, adjust_next (the default)', () => {
  let env: TestEnvironment;
  beforeAll(async () => {
    env = await t.createEnvironment('Adjust');
  });

  it('accepts an event for a billed period and bills the difference on the item’s next invoice, once', async () => {
    const { customer, itemId, send } = await meteredCustomer(env);
    expect(
      (await gql(t, env, 'query { meteringSettings { lateEvents gracePeriodHours } }')).meteringSettings,
    ).toEqual({
      lateEvents: 'adjust_next',
      gracePeriodHours: 0,
    });
    await send('2026-01-10T00:00:00Z', 2);
    await billing.runBilling(env, '2026-02-01T00:00:00.000Z');
    const late = await send('2026-01-20T00:00:00Z', 3);
    expect(late.status).toBe('accepted');
    expect(await metering.usage(env, itemId, '2026-01-15T00:00:00Z')).toMatchObject({
      quantity: 5,
      amount: 500,
      billed: true,
    });
    await send('2026-02-10T00:00:00Z', 1);
    await billing.runBilling(env, '2026-03-01T00:00:00.000Z');
    await billing.runBilling(env, '2026-03-01T00:00:00.000Z');
    const invoices = await billing.invoicesOf(env, customer);
    expect(invoices).toHaveLength(2);
    expect(invoices[0].items.map((line: Line) => [line.periodStart, line.amount])).toEqual([
      ['2026-01-01', 200],
    ]);
    const lines = invoices[1].items.map((line: Line) => [line.periodStart, line.amount]).sort();
    expect(lines).toEqual([
      ['2026-01-01', 300],
      ['2026-02-01', 100],
    ]);
    expect(invoices[1].items.find((line: Line) => line.periodStart === '2026-01-01').description).toContain(
      'late usage',
    );
    // A second late event for January after that: only its own difference, on the following invoice.
    await send('2026-01-25T00:00:00Z', 1);
    await billing.runBilling(env, '2026-04-01T00:00:00.000Z');
    const third = (await billing.invoicesOf(env, customer))[2];
    expect(third.items.map((line: Line) => [line.periodStart, line.amount]).sort()).toEqual([
      ['2026-01-01', 100],
    ]);
  });
});

describe('late events, reject', () => {
  it('rejects an event for a billed period and keeps taking those of open periods', async () => {
    const env = await t.createEnvironment('Reject');
    expect(await settingsUpdate(env, { lateEvents: 'reject' })).toEqual({
      lateEvents: 'reject',
      gracePeriodHours: 0,
    });
    const { itemId, send } = await meteredCustomer(env);
    await send('2026-01-10T00:00:00Z', 2);
    await billing.runBilling(env, '2026-02-01T00:00:00.000Z');
    expect(await send('2026-01-20T00:00:00Z', 3)).toMatchObject({
      status: 'rejected',
      reason: 'period_billed',
    });
    expect(await send('2026-02-20T00:00:00Z', 3)).toMatchObject({ status: 'accepted' });
    expect(await metering.usage(env, itemId, '2026-01-15T00:00:00Z')).toMatchObject({
      quantity: 2,
      billed: true,
    });
  });
});

describe('grace period', () => {
  it('keeps an arrears period open for late events until the grace period has passed', async () => {
    const env = await t.createEnvironment('Grace');
    await settingsUpdate(env, { gracePeriodHours: 48 });
    const { customer, send } = await meteredCustomer(env);
    await send('2026-01-10T00:00:00Z', 2);
    await billing.runBilling(env, '2026-02-01T00:00:00.000Z');
    expect(await billing.invoicesOf(env, customer)).toEqual([]);
    expect(await send('2026-01-31T23:00:00Z', 4)).toMatchObject({ status: 'accepted' });
    await billing.runBilling(env, '2026-02-03T00:00:00.000Z');
    const [invoice] = await billing.invoicesOf(env, customer);
    expect(invoice.items.map((line: Line) => [line.periodStart, line.amount])).toEqual([['2026-01-01', 600]]);
  });
});
