import { describe, expect, it } from 'vitest';
import { gql } from '../support/catalog.ts';
import { setupTestApp } from '../support/harness.ts';
import { billingFixtures, midnight } from './fixtures.ts';

const t = setupTestApp();
const f = billingFixtures(t);

type Line = { description: string | null; periodStart: string; periodEnd: string; amount: number };

const show = (line: Line) => `${line.description} | ${line.periodStart}..${line.periodEnd} | ${line.amount}`;

/** A customer, the product "Seat" and a monthly advance price of 10.00 EUR a seat. */
async function given() {
  const env = await t.createEnvironment();
  const product = await f.createProduct(env, { name: 'Seat' });
  const customerId = await f.createCustomer(env);
  const basic = await f.createPrice(env, { name: 'Basic', pricing: { eur: { amount: 1000 } } });
  return { env, product, customerId, basic };
}

const linesOf = async (g: Awaited<ReturnType<typeof given>>) =>
  (await f.invoicesOf(g.env, g.customerId)).map((invoice: { items: Line[] }) => invoice.items.map(show));

const trialSubscription = (g: Awaited<ReturnType<typeof given>>, extra: Record<string, unknown> = {}) => ({
  customerId: g.customerId,
  term: { start: '2026-03-01' },
  trialEnd: '2026-03-15',
  items: [{ productId: g.product.id, priceId: g.basic.id, quantity: 3 }],
  ...extra,
});

describe('trials', () => {
  it('charges nothing during the trial, anchors the periods at its end and names the trial in a zero line of the first invoice', async () => {
    const g = await given();
    const subscription = await f.subscribe(g.env, trialSubscription(g));
    expect(subscription.items[0]).toMatchObject({
      startsOn: '2026-03-15',
      billAt: midnight('2026-03-15'),
      period: { start: '2026-03-15', end: '2026-04-15' },
    });
    const read = await gql(
      t,
      g.env,
      'query ($id: UUID!) { subscription(id: $id) { trialEnd billingAnchor } }',
      {
        id: subscription.id,
      },
    );
    expect(read.subscription).toEqual({ trialEnd: '2026-03-15', billingAnchor: '2026-03-15' });

    // the run on the trial's first day bills nothing
    await f.runBilling(g.env, midnight('2026-03-01'));
    await f.runBilling(g.env, '2026-03-14T23:59:59.000Z');
    expect(await linesOf(g)).toEqual([]);

    // the preview of the trial end shows the trial line, and the run books exactly that
    const preview = await gql(
      t,
      g.env,
      `query ($id: UUID, $asOf: DateTime) { invoicePreview(subscriptionId: $id, asOf: $asOf) {
        totalExclVat items { description periodStart periodEnd amount } } }`,
      { id: subscription.id, asOf: midnight('2026-03-15') },
    );
    await f.runBilling(g.env, midnight('2026-03-15'));
    await f.runBilling(g.env, midnight('2026-04-15'));
    const lines = await linesOf(g);
    expect(lines).toEqual([
      [
        'Basic | 2026-03-15..2026-04-15 | 3000',
        'Trial period of 3 × Seat, 1 Mar – 15 Mar | 2026-03-01..2026-03-15 | 0',
      ],
      ['Basic | 2026-04-15..2026-05-15 | 3000'],
    ]);
    expect(preview.invoicePreview.map((invoice: { items: Line[] }) => invoice.items.map(show))).toEqual([
      lines[0],
    ]);
  });

  it('a cancellation during the trial bills nothing, and the subscription ends', async () => {
    const g = await given();
    const subscription = await f.subscribe(g.env, trialSubscription(g));
    const cancel = await f.tryCancel(g.env, subscription.id, '2026-03-05T12:00:00Z');
    expect(cancel.userErrors).toEqual([]);
    expect(cancel.prorationLines).toEqual([]);
    expect(cancel.subscription.items[0]).toMatchObject({ endsOn: '2026-03-15', billAt: null });
    await f.runBilling(g.env, midnight('2026-03-15'));
    await f.runBilling(g.env, midnight('2026-04-15'));
    expect(await linesOf(g)).toEqual([]);
    const rows = await t.sql<{ n: string }>(
      'select count(*) as n from proration_line where environment_id = $1',
      [g.env.id],
    );
    expect(rows[0]?.n).toBe('0');
    const read = await gql(t, g.env, 'query ($id: UUID!) { subscription(id: $id) { status } }', {
      id: subscription.id,
    });
    expect(read.subscription.status).toBe('ended');
  });

  it('a change during the trial applies from the trial end without proration; an item added during it has a trial line from its day', async () => {
    const g = await given();
    const subscription = await f.subscribe(g.env, trialSubscription(g));
    const update = await f.tryUpdate(g.env, subscription.id, {
      at: '2026-03-10T09:00:00Z',
      items: [{ id: subscription.items[0].id, quantity: 5 }],
      addItems: [{ productId: g.product.id, priceId: g.basic.id, quantity: 1 }],
    });
    expect(update.userErrors).toEqual([]);
    expect(update.prorationLines).toEqual([
      expect.objectContaining({
        kind: 'trial',
        description: 'Trial period of 1 × Seat, 10 Mar – 15 Mar',
        amount: 0,
      }),
    ]);
    await f.runBilling(g.env, midnight('2026-03-15'));
    expect(await linesOf(g)).toEqual([
      [
        'Basic | 2026-03-15..2026-04-15 | 5000',
        'Basic | 2026-03-15..2026-04-15 | 1000',
        'Trial period of 5 × Seat, 1 Mar – 15 Mar | 2026-03-01..2026-03-15 | 0',
        'Trial period of 1 × Seat, 10 Mar – 15 Mar | 2026-03-10..2026-03-15 | 0',
      ],
    ]);
  });

  it('a termed subscription with a trial renews by terms counted from its start, not from the trial end', async () => {
    const g = await given();
    const subscription = await f.subscribe(
      g.env,
      trialSubscription(g, { term: { start: '2026-03-01', end: '2026-06-01' }, autoRenewal: true }),
    );
    await f.runBilling(g.env, midnight('2026-06-01'));
    const read = await gql(t, g.env, 'query ($id: UUID!) { subscription(id: $id) { term { start end } } }', {
      id: subscription.id,
    });
    expect(read.subscription.term).toEqual({ start: '2026-06-01', end: '2026-09-01' });
  });

  it('refuses a trial end that is not after the start, not before the term end, or beside another billing anchor', async () => {
    const g = await given();
    const cases: [Record<string, unknown>, string[], string][] = [
      [{ trialEnd: '2026-03-01' }, ['input', 'trialEnd'], 'after the term start'],
      [{ trialEnd: '2026-02-20' }, ['input', 'trialEnd'], 'after the term start'],
      [
        { term: { start: '2026-03-01', end: '2026-03-10' } },
        ['input', 'trialEnd'],
        'term would end within its trial',
      ],
      [{ billingAnchor: '2026-03-20' }, ['input', 'billingAnchor'], 'cannot be combined with a trial'],
    ];
    for (const [extra, field, message] of cases) {
      const payload = await f.trySubscribe(g.env, trialSubscription(g, extra));
      expect(payload.userErrors).toEqual([
        { field, message: expect.stringContaining(message), code: 'INVALID_INPUT' },
      ]);
    }
    const count = await t.sql<{ n: string }>(
      'select count(*) as n from subscription where environment_id = $1',
      [g.env.id],
    );
    expect(count[0]?.n).toBe('0');
  });

  it('a billing anchor with a term end: a prorated first period, whole periods from the anchor, the last cut at the term end', async () => {
    const g = await given();
    await f.subscribe(g.env, {
      customerId: g.customerId,
      term: { start: '2026-03-12', end: '2026-05-20' },
      billingAnchor: '2026-04-01',
      items: [{ productId: g.product.id, priceId: g.basic.id, quantity: 3 }],
    });
    for (const day of ['2026-03-12', '2026-04-01', '2026-05-01', '2026-06-01']) {
      await f.runBilling(g.env, midnight(day));
    }
    // 3000 × 20/31 → 1935 for Mar 12 to Apr 1; 3000 × 19/31 → 1839 for May 1 to the term end on May 20
    expect(await linesOf(g)).toEqual([
      ['Remaining time on 3 × Seat from 12 Mar | 2026-03-12..2026-04-01 | 1935'],
      ['Basic | 2026-04-01..2026-05-01 | 3000'],
      ['Basic | 2026-05-01..2026-05-20 | 1839'],
    ]);
  });
});

describe('trial lines after changes during the trial', () => {
  const CANCEL = `mutation ($id: UUID!) { subscriptionScheduledChangeCancel(id: $id) { userErrors { field message code } } }`;
  const CHANGES = `query ($id: UUID!) { subscription(id: $id) { items { scheduledChanges { id } } } }`;

  it('the trial line shows the quantity in force at the trial end, and goes back when the change is cancelled', async () => {
    // given a trial of 3 seats to Mar 15
    const g = await given();
    const subscription = await f.subscribe(g.env, trialSubscription(g));
    const itemId = subscription.items[0].id;

    // when on Mar 5 the quantity becomes 5, then a second change on Mar 6 makes it 4
    for (const [at, quantity] of [
      ['2026-03-05T10:00:00Z', 5],
      ['2026-03-06T10:00:00Z', 4],
    ] as const) {
      const update = await f.tryUpdate(g.env, subscription.id, { at, items: [{ id: itemId, quantity }] });
      expect(update.userErrors).toEqual([]);
    }
    // and the latest change is cancelled again
    const changes = (await gql(t, g.env, CHANGES, { id: subscription.id })).subscription.items[0]
      .scheduledChanges;
    expect(changes).toHaveLength(2);
    const cancelled = await gql(t, g.env, CANCEL, { id: changes[1].id });
    expect(cancelled.subscriptionScheduledChangeCancel.userErrors).toEqual([]);

    // then the first invoice bills 5 seats from the trial end and names a trial of 5 seats
    await f.runBilling(g.env, midnight('2026-03-15'));
    expect(await linesOf(g)).toEqual([
      [
        'Basic | 2026-03-15..2026-04-15 | 5000',
        'Trial period of 5 × Seat, 1 Mar – 15 Mar | 2026-03-01..2026-03-15 | 0',
      ],
    ]);
  });
});
