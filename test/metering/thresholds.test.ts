import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { billingFixtures } from '../subscription/fixtures.ts';
import { gql } from '../support/catalog.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { meteringFixtures, txn } from './fixtures.ts';

const t = setupTestApp();
const billing = billingFixtures(t);
const metering = meteringFixtures(t);

/** A customer billed 1.00 EUR per GB of the metric `gb` (sum), monthly in arrears from 2026-01-01. */
async function meteredItem(env: TestEnvironment, code: string) {
  const customer = await billing.createCustomer(env);
  const product = await billing.createProduct(env, { name: 'Storage' });
  const price = await billing.createPrice(env, {
    name: 'Per GB',
    method: 'event_based',
    pricing: { eur: { amount: 100 } },
  });
  await metering.createMetric(env, { code, aggregation: 'sum', fieldName: 'gb' });
  const subscription = await billing.subscribe(env, {
    customerId: customer,
    term: { start: '2026-01-01' },
    items: [{ productId: product.id, priceId: price.id, metricCode: code }],
  });
  const event = (timestamp: string, gb: number) => ({
    transactionId: txn(),
    customer,
    metric: code,
    timestamp,
    properties: { gb },
  });
  return { customer, itemId: subscription.items[0].id as string, event };
}

const createThreshold = async (env: TestEnvironment, input: Record<string, unknown>) =>
  (
    await gql(
      t,
      env,
      `mutation ($input: UsageThresholdCreateInput!) { usageThresholdCreate(input: $input) {
        usageThreshold { id subscriptionItemId kind value } userErrors { field code message } } }`,
      { input },
    )
  ).usageThresholdCreate;

type Crossed = { objectId: string; data: Record<string, unknown> };

const crossings = async (env: TestEnvironment, thresholdId: string): Promise<Crossed[]> =>
  (
    await gql(
      t,
      env,
      `query ($id: UUID) { events(first: 50, type: USAGE_THRESHOLD_CROSSED, objectId: $id) {
        edges { node { objectId data } } } }`,
      { id: thresholdId },
    )
  ).events.edges.map((edge: { node: Crossed }) => edge.node);

describe('usage thresholds', () => {
  let env: TestEnvironment;
  beforeAll(async () => {
    env = await t.createEnvironment('Thresholds');
  });

  it('emits exactly one event per period when concurrent batches together cross it', async () => {
    const { itemId, event } = await meteredItem(env, 'gb_concurrent');
    const created = await createThreshold(env, { subscriptionItemId: itemId, kind: 'usage', value: 11 });
    expect(created.userErrors).toEqual([]);
    const threshold = created.usageThreshold;
    expect(threshold).toMatchObject({ subscriptionItemId: itemId, kind: 'usage', value: 11 });

    // Below the threshold: nothing.
    await metering.ingestOk(env, [event('2026-01-05T10:00:00Z', 3)]);
    expect(await crossings(env, threshold.id)).toEqual([]);

    // Eight concurrent batches of 1 GB each: none reaches 11 alone, only all of them together do
    // (3 + 8 = 11), so the threshold is seen only by a batch that sees every other one committed.
    const batches = Array.from({ length: 8 }, (_, n) => [
      event(`2026-01-${String(10 + n).padStart(2, '0')}T10:00:00Z`, 0.5),
      event(`2026-01-${String(10 + n).padStart(2, '0')}T11:00:00Z`, 0.5),
    ]);
    const results = await Promise.all(batches.map((batch) => metering.ingestOk(env, batch)));
    expect(results.map((result) => result.accepted)).toEqual(Array(8).fill(2));
    const first = await crossings(env, threshold.id);
    expect(first).toHaveLength(1);
    const data = first[0]?.data as Record<string, unknown>;
    expect(data).toMatchObject({
      periodStart: '2026-01-01',
      periodEnd: '2026-02-01',
      currency: 'EUR',
      threshold: { id: threshold.id, kind: 'usage', value: 11, subscriptionItemId: itemId },
      quantity: 11,
      amount: 1100,
    });

    // More usage in the same period: no second event.
    await metering.ingestOk(env, [event('2026-01-20T10:00:00Z', 50)]);
    expect(await crossings(env, threshold.id)).toHaveLength(1);

    // The next period counts afresh: below, then crossing once more.
    await metering.ingestOk(env, [event('2026-02-03T10:00:00Z', 9)]);
    expect(await crossings(env, threshold.id)).toHaveLength(1);
    await metering.ingestOk(env, [event('2026-02-04T10:00:00Z', 2)]);
    const second = await crossings(env, threshold.id);
    expect(second).toHaveLength(2);
    expect(second[1]?.data).toMatchObject({ periodStart: '2026-02-01', quantity: 11, amount: 1100 });
  });

  it('two batches that wait for each other still see each other: the second to check emits', async () => {
    const { itemId, event } = await meteredItem(env, 'gb_held');
    const { usageThreshold } = await createThreshold(env, {
      subscriptionItemId: itemId,
      kind: 'usage',
      value: 8,
    });
    // Hold the threshold's row so both batches store their events and then queue behind it.
    const holder = new pg.Client({ connectionString: t.databaseUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from usage_threshold where id = $1 for update', [usageThreshold.id]);
      const sent = [
        metering.ingestOk(env, [event('2026-04-02T00:00:00Z', 5)]),
        metering.ingestOk(env, [event('2026-04-03T00:00:00Z', 5)]),
      ];
      // Until both wait on the lock (at most 10 s: were they not to lock, they finish on their own).
      for (let wait = 0; wait < 100; wait += 1) {
        const [{ waiting }] = (
          await holder.query(
            `select count(*)::int as waiting from pg_stat_activity where wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
          )
        ).rows;
        if (waiting >= 2) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await holder.query('commit');
      await Promise.all(sent);
    } finally {
      await holder.end();
    }
    // Neither batch reaches 8 alone; the one that checked second saw the other's committed events.
    expect((await crossings(env, usageThreshold.id)).map((crossed) => crossed.data)).toEqual([
      expect.objectContaining({ periodStart: '2026-04-01', quantity: 10 }),
    ]);
  });

  it('an amount threshold compares what the price gives, in minor units', async () => {
    const { itemId, event } = await meteredItem(env, 'gb_amount');
    const { usageThreshold } = await createThreshold(env, {
      subscriptionItemId: itemId,
      kind: 'amount',
      value: 2500,
    });
    await metering.ingestOk(env, [event('2026-03-02T00:00:00Z', 24.99)]);
    expect(await crossings(env, usageThreshold.id)).toEqual([]);
    await metering.ingestOk(env, [event('2026-03-02T01:00:00Z', 0.01)]);
    expect((await crossings(env, usageThreshold.id)).map((crossed) => crossed.data)).toEqual([
      expect.objectContaining({ periodStart: '2026-03-01', amount: 2500, quantity: 25 }),
    ]);
    // A usage threshold on the same item is its own: 25 GB is below 100, nothing.
    const usage = await createThreshold(env, { subscriptionItemId: itemId, kind: 'usage', value: 100 });
    await metering.ingestOk(env, [event('2026-03-03T00:00:00Z', 1)]);
    expect(await crossings(env, usage.usageThreshold.id)).toEqual([]);
    const listed = await gql(
      t,
      env,
      `query ($id: UUID!) { subscriptionItemUsage(subscriptionItemId: $id, at: "2026-03-05T00:00:00Z") {
        subscriptionItem { usageThresholds { kind value } } } }`,
      { id: itemId },
    );
    expect(listed.subscriptionItemUsage.subscriptionItem.usageThresholds).toEqual([
      { kind: 'amount', value: 2500 },
      { kind: 'usage', value: 100 },
    ]);
  });

  it('refuses a threshold on an item that bills no metric, and values that are not above 0', async () => {
    const customer = await billing.createCustomer(env);
    const product = await billing.createProduct(env, { name: 'Seats' });
    const price = await billing.createPrice(env, { name: 'Seat', pricing: { eur: { amount: 100 } } });
    const subscription = await billing.subscribe(env, {
      customerId: customer,
      term: { start: '2026-01-01' },
      items: [{ productId: product.id, priceId: price.id }],
    });
    const plain = await createThreshold(env, {
      subscriptionItemId: subscription.items[0].id,
      kind: 'usage',
      value: 5,
    });
    expect(plain.userErrors).toEqual([expect.objectContaining({ code: 'INVALID_REFERENCE' })]);
    const { itemId } = await meteredItem(env, 'gb_invalid');
    for (const input of [
      { kind: 'usage', value: 0 },
      { kind: 'amount', value: 10.5 },
    ]) {
      const refused = await createThreshold(env, { subscriptionItemId: itemId, ...input });
      expect(refused.userErrors).toEqual([expect.objectContaining({ code: 'INVALID_INPUT' })]);
    }
  });
});
