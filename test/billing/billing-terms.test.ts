import { describe, expect, it } from 'vitest';
import { billingFixtures, midnight } from '../subscription/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = billingFixtures(t);

/** The periods billed for the customer, as `start..end` per invoice, oldest first. */
async function billedPeriods(env: TestEnvironment, customerId: string): Promise<string[][]> {
  const invoices = await f.invoicesOf(env, customerId);
  return invoices.map((invoice: { items: { periodStart: string; periodEnd: string }[] }) =>
    invoice.items.map((item) => `${item.periodStart}..${item.periodEnd}`),
  );
}

/** Each test gets its own environment, so that its runs bill only its own subscriptions. */
async function given(items: ('advance' | 'arrears' | 'one_time')[], subscription: Record<string, unknown>) {
  const env = await t.createEnvironment();
  const product = await f.createProduct(env);
  const customerId = await f.createCustomer(env);
  const prices = {
    advance: await f.createPrice(env, { name: 'Advance', pricing: { eur: { amount: 100 } } }),
    arrears: await f.createPrice(env, {
      name: 'Arrears',
      method: 'arrears',
      pricing: { eur: { amount: 100 } },
    }),
    one_time: await f.createPrice(env, {
      name: 'Setup',
      purchase: 'one_time',
      pricing: { eur: { amount: 5000 } },
    }),
  };
  const created = await f.subscribe(env, {
    customerId,
    ...subscription,
    items: items.map((kind) => ({ productId: product.id, priceId: prices[kind].id })),
  });
  return { env, customerId, subscription: created };
}

const runs = async (env: TestEnvironment, days: string[]) => {
  const results = [];
  for (const day of days) results.push(await f.runBilling(env, midnight(day)));
  return results;
};

describe('renewal', () => {
  it('renews a termed subscription with autoRenewal at its term end, for a term as long as the first', async () => {
    // given a three-month term from Jan 31 that renews
    const { env, customerId, subscription } = await given(['advance'], {
      term: { start: '2026-01-31', end: '2026-04-30' },
      autoRenewal: true,
    });

    // when runs are made on every boundary into the second term
    const results = await runs(env, ['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30', '2026-04-30']);

    // then the run at the term end renews it (once) and bills the first period of the new term
    expect(results.map((run) => [run.renewalCount, run.periodCount])).toEqual([
      [0, 1],
      [0, 1],
      [0, 1],
      [1, 1],
      [0, 0],
    ]);
    const read = await t.rest('GET', `/subscriptions/${subscription.id}`, { env });
    expect(read.body).toMatchObject({
      term: { start: '2026-04-30', end: '2026-07-31' },
      autoRenewal: true,
      items: [{ billAt: midnight('2026-05-31'), period: { start: '2026-05-31', end: '2026-06-30' } }],
    });
    expect((await billedPeriods(env, customerId)).at(-1)).toEqual(['2026-04-30..2026-05-31']);
  });

  it('renews a term of days by as many days, several times in one late run', async () => {
    const { env, subscription } = await given(['advance'], {
      term: { start: '2026-01-01', end: '2026-01-11' },
      autoRenewal: true,
    });
    const [run] = await runs(env, ['2026-02-05']);
    expect(run.renewalCount).toBe(3);
    const read = await t.rest('GET', `/subscriptions/${subscription.id}`, { env });
    expect(read.body.term).toEqual({ start: '2026-01-31', end: '2026-02-10' });
  });

  it('ends a termed subscription without autoRenewal at its term end: advance bills nothing more, arrears its last period', async () => {
    // given a two-month term from Jan 1, not renewing, with an advance and an arrears item
    const { env, customerId, subscription } = await given(['advance', 'arrears'], {
      term: { start: '2026-01-01', end: '2026-03-01' },
    });

    // when runs are made through the term end and after
    const results = await runs(env, ['2026-01-01', '2026-02-01', '2026-03-01', '2026-04-01']);

    // then each item billed two periods, and the run at the term end ended the subscription
    expect(await billedPeriods(env, customerId)).toEqual([
      ['2026-01-01..2026-02-01'],
      ['2026-02-01..2026-03-01', '2026-01-01..2026-02-01'],
      ['2026-02-01..2026-03-01'],
    ]);
    expect(results.map((run) => run.endedCount)).toEqual([0, 0, 1, 0]);
    const read = await t.rest('GET', `/subscriptions/${subscription.id}`, { env });
    expect(read.body).toMatchObject({ autoRenewal: false, items: [] });
    const status = await t.sql('select status from subscription where id = $1', [subscription.id]);
    expect(status).toEqual([{ status: 'ended' }]);
  });

  it('stops at the current term end when autoRenewal is turned off', async () => {
    const { env, customerId, subscription } = await given(['advance'], {
      term: { start: '2026-01-01', end: '2026-02-01' },
      autoRenewal: true,
    });
    await runs(env, ['2026-01-01', '2026-02-01']);
    const update = await f.tryUpdate(env, subscription.id, { autoRenewal: false });
    expect(update.userErrors).toEqual([]);
    expect(update.subscription).toMatchObject({ term: { start: '2026-02-01', end: '2026-03-01' } });
    const [run] = await runs(env, ['2026-03-01']);
    expect(run).toMatchObject({ periodCount: 0, renewalCount: 0, endedCount: 1 });
    expect(await billedPeriods(env, customerId)).toEqual([
      ['2026-01-01..2026-02-01'],
      ['2026-02-01..2026-03-01'],
    ]);
  });

  it('bills a one-time item once, at the start, and never again', async () => {
    const { env, customerId, subscription } = await given(['one_time', 'advance'], {
      term: { start: '2026-01-01' },
    });
    await runs(env, ['2026-01-01', '2026-02-01', '2026-03-01']);
    const invoices = await f.invoicesOf(env, customerId);
    expect(invoices.map((invoice: { totalExclVat: number }) => invoice.totalExclVat)).toEqual([
      5100, 100, 100,
    ]);
    const read = await t.rest('GET', `/subscriptions/${subscription.id}`, { env });
    expect(read.body.items).toHaveLength(1);
  });
});

describe('changes', () => {
  it('without proration, bill new quantities and added items from the next period on, and the period under way as it was', async () => {
    // given advance and arrears items from Jan 1, January billed in advance
    const { env, customerId, subscription } = await given(['advance', 'arrears'], {
      term: { start: '2026-01-01' },
    });
    await runs(env, ['2026-01-01']);
    const [advanceItem, arrearsItem] = subscription.items;

    // when on Jan 15 both quantities become 3 and another advance item is added
    const update = await f.tryUpdate(env, subscription.id, {
      at: '2026-01-15T00:00:00Z',
      items: [
        { id: advanceItem.id, quantity: 3 },
        { id: arrearsItem.id, quantity: 3 },
      ],
      addItems: [{ productId: advanceItem.product.id, priceId: advanceItem.price.id }],
      proration: 'none',
    });
    expect(update.userErrors).toEqual([]);
    await runs(env, ['2026-02-01', '2026-03-01']);

    // then February bills the new advance quantity and the added item, and January in arrears at 1;
    // March bills the arrears February at 3
    const invoices = await f.invoicesOf(env, customerId);
    const lines = invoices.map((invoice: { items: { periodStart: string; quantity: number }[] }) =>
      invoice.items.map((item) => `${item.periodStart} x${item.quantity}`),
    );
    expect(lines).toEqual([
      ['2026-01-01 x1'],
      ['2026-02-01 x3', '2026-01-01 x1', '2026-02-01 x1'],
      ['2026-03-01 x3', '2026-02-01 x3', '2026-03-01 x1'],
    ]);
    const read = await t.rest('GET', `/subscriptions/${subscription.id}`, { env });
    expect(read.body.items.map((item: { quantity: number }) => item.quantity)).toEqual([3, 3, 1]);
  });

  it('refuses an added item whose price has no pricing in the subscription’s currency', async () => {
    const { env, subscription } = await given(['advance'], { term: { start: '2026-01-01' } });
    const dollars = await f.createPrice(env, { name: 'Dollars', pricing: { usd: { amount: 1 } } });
    const update = await f.tryUpdate(env, subscription.id, {
      addItems: [{ productId: subscription.items[0].product.id, priceId: dollars.id }],
    });
    expect(update.userErrors).toEqual([
      {
        field: ['input', 'addItems', '0', 'priceId'],
        message: `price "Dollars" (${dollars.id}) has no pricing in EUR`,
        code: 'INVALID_REFERENCE',
      },
    ]);
  });
});

describe('cancellation', () => {
  it('without proration, lets the periods under way at `at` run out: arrears bills the period, advance bills no further', async () => {
    // given monthly advance and arrears items from Jan 1, billed through February's start
    const { env, customerId, subscription } = await given(['advance', 'arrears'], {
      term: { start: '2026-01-01' },
    });
    await runs(env, ['2026-01-01', '2026-02-01']);

    // when it is cancelled on Feb 15
    const cancel = await f.tryCancel(env, subscription.id, '2026-02-15T09:30:00Z', { proration: 'none' });
    expect(cancel.userErrors).toEqual([]);
    expect(cancel.subscription).toMatchObject({
      status: 'cancelled',
      cancelledAt: '2026-02-15T09:30:00.000Z',
      items: [
        { endsOn: '2026-03-01', billAt: null },
        { endsOn: '2026-03-01', billAt: midnight('2026-03-01') },
      ],
    });

    // then the run on Mar 1 bills February in arrears, and ends the subscription; nothing follows
    const [march, april] = await runs(env, ['2026-03-01', '2026-04-01']);
    expect(march).toMatchObject({ periodCount: 1, endedCount: 1 });
    expect(april).toMatchObject({ periodCount: 0, endedCount: 0 });
    expect(await billedPeriods(env, customerId)).toEqual([
      ['2026-01-01..2026-02-01'],
      ['2026-02-01..2026-03-01', '2026-01-01..2026-02-01'],
      ['2026-02-01..2026-03-01'],
    ]);
  });

  it('at a period boundary, ends before the period that starts then', async () => {
    const { env, customerId, subscription } = await given(['advance', 'arrears'], {
      term: { start: '2026-01-01' },
    });
    await runs(env, ['2026-01-01']);
    await f.tryCancel(env, subscription.id, midnight('2026-02-01'));
    await runs(env, ['2026-02-01', '2026-03-01']);
    expect(await billedPeriods(env, customerId)).toEqual([
      ['2026-01-01..2026-02-01'],
      ['2026-01-01..2026-02-01'],
    ]);
  });

  it('without proration, never takes back a billed period: a cancellation dated before periods billed in advance ends after them', async () => {
    const { env, customerId, subscription } = await given(['advance'], { term: { start: '2026-01-01' } });
    await runs(env, ['2026-03-01']);
    const cancel = await f.tryCancel(env, subscription.id, '2026-01-15T00:00:00Z', { proration: 'none' });
    expect(cancel.subscription.items).toMatchObject([{ endsOn: '2026-04-01', billAt: null }]);
    const [run] = await runs(env, ['2026-04-01']);
    expect(run).toMatchObject({ periodCount: 0, endedCount: 1 });
    expect((await billedPeriods(env, customerId)).flat()).toHaveLength(3);
  });

  it('without proration, dated in the future, bills until then, and stops a renewal after it', async () => {
    const { env, customerId, subscription } = await given(['advance'], {
      term: { start: '2026-01-01', end: '2026-03-01' },
      autoRenewal: true,
    });
    await f.tryCancel(env, subscription.id, '2026-04-10T00:00:00Z', { proration: 'none' });
    const results = await runs(env, [
      '2026-01-01',
      '2026-02-01',
      '2026-03-01',
      '2026-04-01',
      '2026-05-01',
      '2026-06-01',
    ]);
    expect(results.map((run) => [run.periodCount, run.renewalCount, run.endedCount])).toEqual([
      [1, 0, 0],
      [1, 0, 0],
      [1, 1, 0],
      [1, 0, 0],
      [0, 0, 1],
      [0, 0, 0],
    ]);
    expect((await billedPeriods(env, customerId)).flat()).toEqual([
      '2026-01-01..2026-02-01',
      '2026-02-01..2026-03-01',
      '2026-03-01..2026-04-01',
      '2026-04-01..2026-05-01',
    ]);
  });
});
