import { describe, expect, it } from 'vitest';
import { gql } from '../support/catalog.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { billingFixtures, midnight } from './fixtures.ts';

const t = setupTestApp();
const f = billingFixtures(t);

type Line = {
  quantity: number;
  unitAmount: number;
  description: string | null;
  periodStart: string;
  periodEnd: string;
  amount: number;
};

/** An invoice line as `description | start..end | amount`. */
const show = (line: Line) => `${line.description} | ${line.periodStart}..${line.periodEnd} | ${line.amount}`;

/** A fresh environment with a customer, the product "Seat" and a monthly advance price of 10.00 EUR a seat. */
async function given(customer: Record<string, unknown> = {}) {
  const env = await t.createEnvironment();
  const product = await f.createProduct(env, { name: 'Seat' });
  const customerId = await f.createCustomer(env, customer);
  const basic = await f.createPrice(env, { name: 'Basic', pricing: { eur: { amount: 1000 } } });
  const pro = await f.createPrice(env, { name: 'Pro', pricing: { eur: { amount: 2500 } } });
  return { env, product, customerId, basic, pro };
}

async function subscribeSeats(
  g: Awaited<ReturnType<typeof given>>,
  quantity: number,
  term: Record<string, unknown> = { start: '2026-03-01' },
) {
  return f.subscribe(g.env, {
    customerId: g.customerId,
    term,
    items: [{ productId: g.product.id, priceId: g.basic.id, quantity }],
  });
}

const PREVIEW = `query ($customerId: UUID, $subscriptionId: UUID, $asOf: DateTime) {
  invoicePreview(customerId: $customerId, subscriptionId: $subscriptionId, asOf: $asOf) {
    currency date totalExclVat totalVat totalInclVat
    items { quantity unitAmount description periodStart periodEnd amount taxAmount }
  }
}`;

async function preview(env: TestEnvironment, args: Record<string, unknown>) {
  return (await gql(t, env, PREVIEW, args)).invoicePreview;
}

const count = async (table: string, env: TestEnvironment) =>
  Number(
    (await t.sql<{ n: string }>(`select count(*) as n from ${table} where environment_id = $1`, [env.id]))[0]
      ?.n,
  );

describe('proration', () => {
  it('a quantity increase mid-period credits the unused days at the old quantity and charges them at the new one on the next invoice', async () => {
    // given 3 seats from Mar 1, March billed in advance (3 × 10.00)
    const g = await given();
    const subscription = await subscribeSeats(g, 3);
    await f.runBilling(g.env, midnight('2026-03-01'));

    // when on Mar 12 (20 of March's 31 days left) the quantity becomes 5
    const update = await f.tryUpdate(g.env, subscription.id, {
      at: '2026-03-12T10:00:00Z',
      items: [{ id: subscription.items[0].id, quantity: 5 }],
    });

    // then the change answers its lines: 3000 × 20/31 = 1935.48 → −1935, 5000 × 20/31 = 3225.81 → 3226
    expect(update.userErrors).toEqual([]);
    expect(update.prorationLines).toEqual([
      {
        kind: 'unused',
        subscriptionItemId: subscription.items[0].id,
        description: 'Unused time on 3 × Seat from 12 Mar',
        quantity: 3,
        amount: -1935,
        periodStart: '2026-03-12',
        periodEnd: '2026-04-01',
        invoiceId: null,
      },
      {
        kind: 'remaining',
        subscriptionItemId: subscription.items[0].id,
        description: 'Remaining time on 5 × Seat from 12 Mar',
        quantity: 5,
        amount: 3226,
        periodStart: '2026-03-12',
        periodEnd: '2026-04-01',
        invoiceId: null,
      },
    ]);
    expect(update.subscription.items[0]).toMatchObject({ quantity: 5, nextQuantity: null });

    // and April's invoice bills April at 5 seats plus both lines
    await f.runBilling(g.env, midnight('2026-04-01'));
    const [, april] = await f.invoicesOf(g.env, g.customerId);
    expect(april.items.map(show)).toEqual([
      'Basic | 2026-04-01..2026-05-01 | 5000',
      'Unused time on 3 × Seat from 12 Mar | 2026-03-12..2026-04-01 | -1935',
      'Remaining time on 5 × Seat from 12 Mar | 2026-03-12..2026-04-01 | 3226',
    ]);
    expect(april.items[1]).toMatchObject({ quantity: 3, unitAmount: -645 });
    expect(april.items[2]).toMatchObject({ quantity: 5, unitAmount: 645.2 });
    expect(april.totalExclVat).toBe(5000 - 1935 + 3226);
    // a later run bills them no more
    await f.runBilling(g.env, midnight('2026-04-02'));
    expect(await f.invoicesOf(g.env, g.customerId)).toHaveLength(2);
  });

  it('invoice_now bills a decrease at once, counting days in the customer time zone', async () => {
    // given a Berlin customer with 5 seats from Mar 1 (local), March billed
    const g = await given({ timezone: 'Europe/Berlin' });
    const subscription = await subscribeSeats(g, 5);
    await f.runBilling(g.env, midnight('2026-03-01'));

    // when at 00:30 on Mar 12 in Berlin (23:30 UTC on Mar 11) the quantity becomes 2, invoiced now
    const update = await f.tryUpdate(g.env, subscription.id, {
      at: '2026-03-11T23:30:00Z',
      items: [{ id: subscription.items[0].id, quantity: 2 }],
      proration: 'invoice_now',
    });

    // then an invoice bills 20 of 31 days: −5000 × 20/31 = −3225.81 → −3226, 2000 × 20/31 = 1290.32 → 1290
    expect(update.userErrors).toEqual([]);
    const invoices = await f.invoicesOf(g.env, g.customerId);
    expect(invoices).toHaveLength(2);
    expect(invoices[1].items.map(show)).toEqual([
      'Unused time on 5 × Seat from 12 Mar | 2026-03-12..2026-04-01 | -3226',
      'Remaining time on 2 × Seat from 12 Mar | 2026-03-12..2026-04-01 | 1290',
    ]);
    expect(invoices[1].totalExclVat).toBe(-1936);
    expect(update.prorationLines.map((line: { invoiceId: string }) => line.invoiceId)).toEqual([
      invoices[1].id,
      invoices[1].id,
    ]);
    // and the next run bills April at 2 seats only
    await f.runBilling(g.env, midnight('2026-04-01'));
    const april = (await f.invoicesOf(g.env, g.customerId))[2];
    expect(april.items.map(show)).toEqual(['Basic | 2026-04-01..2026-05-01 | 2000']);
  });

  it('an upgrade to another price mid-period prorates both prices; none waits for the next period', async () => {
    const g = await given();
    const subscription = await subscribeSeats(g, 2);
    await f.runBilling(g.env, midnight('2026-03-01'));
    const update = await f.tryUpdate(g.env, subscription.id, {
      at: midnight('2026-03-12'),
      items: [{ id: subscription.items[0].id, priceId: g.pro.id }],
    });
    expect(update.userErrors).toEqual([]);
    // 2 × 10.00 × 20/31 = 1290.32 → −1290; 2 × 25.00 × 20/31 = 3225.81 → 3226
    expect(update.prorationLines.map((line: { amount: number }) => line.amount)).toEqual([-1290, 3226]);
    expect(update.subscription.items[0].price).toEqual({ id: g.pro.id, name: 'Pro' });
    await f.runBilling(g.env, midnight('2026-04-01'));
    const april = (await f.invoicesOf(g.env, g.customerId))[1];
    expect(april.items.map(show)).toEqual([
      'Pro | 2026-04-01..2026-05-01 | 5000',
      'Unused time on 2 × Seat from 12 Mar | 2026-03-12..2026-04-01 | -1290',
      'Remaining time on 2 × Seat from 12 Mar | 2026-03-12..2026-04-01 | 3226',
    ]);
  });

  it('refuses a price of another term, and a prorated change dated before a billed period', async () => {
    const g = await given();
    const yearly = await f.createPrice(g.env, {
      name: 'Yearly',
      termUnit: 'year',
      pricing: { eur: { amount: 1 } },
    });
    const subscription = await subscribeSeats(g, 2);
    await f.runBilling(g.env, midnight('2026-03-01'));
    await f.runBilling(g.env, midnight('2026-04-01'));
    const other = await f.tryUpdate(g.env, subscription.id, {
      items: [{ id: subscription.items[0].id, priceId: yearly.id }],
    });
    expect(other.userErrors).toEqual([
      {
        field: ['input', 'items', '0', 'priceId'],
        message: expect.stringContaining('remove the item and add one at the new price'),
        code: 'INVALID_INPUT',
      },
    ]);
    const early = await f.tryUpdate(g.env, subscription.id, {
      at: midnight('2026-03-12'),
      items: [{ id: subscription.items[0].id, quantity: 4 }],
    });
    expect(early.userErrors).toEqual([
      {
        field: ['input', 'at'],
        message: expect.stringContaining(
          'is before the period 2026-04-01 to 2026-05-01, which is already billed',
        ),
        code: 'CONFLICT',
      },
    ]);
    expect(await count('subscription_change', g.env)).toBe(0);
  });

  it('an item added mid-period is charged for the days to its first period; a removed one credited for the rest of its period', async () => {
    const g = await given();
    const subscription = await subscribeSeats(g, 1);
    await f.runBilling(g.env, midnight('2026-03-01'));
    const added = await f.tryUpdate(g.env, subscription.id, {
      at: midnight('2026-03-12'),
      addItems: [{ productId: g.product.id, priceId: g.pro.id, quantity: 1 }],
    });
    // 2500 × 20/31 = 1612.9 → 1613
    expect(added.prorationLines.map(show)).toEqual([
      'Remaining time on 1 × Seat from 12 Mar | 2026-03-12..2026-04-01 | 1613',
    ]);
    const removed = await f.tryUpdate(g.env, subscription.id, {
      at: midnight('2026-03-22'),
      removeItemIds: [subscription.items[0].id],
    });
    // 1000 × 10/31 = 322.58 → −323
    expect(removed.prorationLines.map(show)).toEqual([
      'Unused time on 1 × Seat from 22 Mar | 2026-03-22..2026-04-01 | -323',
    ]);
    await f.runBilling(g.env, midnight('2026-04-01'));
    const april = (await f.invoicesOf(g.env, g.customerId))[1];
    expect(april.items.map(show)).toEqual([
      'Pro | 2026-04-01..2026-05-01 | 2500',
      'Remaining time on 1 × Seat from 12 Mar | 2026-03-12..2026-04-01 | 1613',
      'Unused time on 1 × Seat from 22 Mar | 2026-03-22..2026-04-01 | -323',
    ]);
  });

  it('a cancellation mid-period credits the unused days on the next invoice', async () => {
    const g = await given();
    const subscription = await subscribeSeats(g, 3);
    await f.runBilling(g.env, midnight('2026-03-01'));
    const cancel = await f.tryCancel(g.env, subscription.id, midnight('2026-03-21'));
    // 3000 × 11/31 = 1064.52 → −1065
    expect(cancel.userErrors).toEqual([]);
    expect(cancel.prorationLines.map(show)).toEqual([
      'Unused time on 3 × Seat from 21 Mar | 2026-03-21..2026-04-01 | -1065',
    ]);
    const run = await f.runBilling(g.env, midnight('2026-04-01'));
    expect(run).toMatchObject({ invoiceCount: 1, periodCount: 0, endedCount: 1 });
    const credit = (await f.invoicesOf(g.env, g.customerId))[1];
    expect(credit.items.map(show)).toEqual([
      'Unused time on 3 × Seat from 21 Mar | 2026-03-21..2026-04-01 | -1065',
    ]);
  });

  it('a term ending mid-period bills the days of its last period up to the end', async () => {
    const g = await given();
    await subscribeSeats(g, 1, { start: '2026-01-01', end: '2026-02-15' });
    await f.runBilling(g.env, midnight('2026-01-01'));
    await f.runBilling(g.env, midnight('2026-02-01'));
    await f.runBilling(g.env, midnight('2026-03-01'));
    const invoices = await f.invoicesOf(g.env, g.customerId);
    // February: 1000 × 14/28 = 500
    expect(invoices.flatMap((invoice: { items: Line[] }) => invoice.items.map(show))).toEqual([
      'Basic | 2026-01-01..2026-02-01 | 1000',
      'Basic | 2026-02-01..2026-02-15 | 500',
    ]);
  });
});

describe('billing anchor', () => {
  it('bills the days from the start to the anchor as a prorated first period, then whole periods from the anchor', async () => {
    const g = await given();
    const subscription = await subscribeSeats(g, 3, { start: '2026-03-12' });
    expect(subscription.items[0]).toMatchObject({ billAt: midnight('2026-03-12') });
    // (the helper subscribes without an anchor; this one asks for 1 April)
    const anchored = await f.subscribe(g.env, {
      customerId: g.customerId,
      term: { start: '2026-03-12' },
      billingAnchor: '2026-04-01',
      items: [{ productId: g.product.id, priceId: g.basic.id, quantity: 3 }],
    });
    expect(anchored.items[0]).toMatchObject({
      startsOn: '2026-04-01',
      period: { start: '2026-04-01', end: '2026-05-01' },
    });
    await f.runBilling(g.env, midnight('2026-03-12'));
    await f.runBilling(g.env, midnight('2026-04-01'));
    const lines = (await f.invoicesOf(g.env, g.customerId)).map((invoice: { items: Line[] }) =>
      invoice.items.map(show),
    );
    // 3000 × 20/31 = 1935.48 → 1935 for Mar 12 to Apr 1, then April whole
    expect(lines).toEqual([
      [
        'Basic | 2026-03-12..2026-04-12 | 3000',
        'Remaining time on 3 × Seat from 12 Mar | 2026-03-12..2026-04-01 | 1935',
      ],
      ['Basic | 2026-04-01..2026-05-01 | 3000'],
    ]);
  });

  it('refuses an anchor from the term end on or beyond the first period', async () => {
    const g = await given();
    const base = {
      customerId: g.customerId,
      items: [{ productId: g.product.id, priceId: g.basic.id }],
    };
    const termed = await f.trySubscribe(g.env, {
      ...base,
      term: { start: '2026-03-12', end: '2026-03-31' },
      billingAnchor: '2026-04-01',
    });
    expect(termed.userErrors).toEqual([
      {
        field: ['input', 'billingAnchor'],
        message: expect.stringContaining('before the term end'),
        code: 'INVALID_INPUT',
      },
    ]);
    const far = await f.trySubscribe(g.env, {
      ...base,
      term: { start: '2026-03-12' },
      billingAnchor: '2026-04-13',
    });
    expect(far.userErrors).toEqual([
      {
        field: ['input', 'billingAnchor'],
        message: expect.stringContaining('within the first period of every item'),
        code: 'INVALID_INPUT',
      },
    ]);
    expect(await count('subscription', g.env)).toBe(0);
  });
});

describe('scheduled changes', () => {
  const SCHEDULE = `query ($id: UUID!) { subscription(id: $id) { items {
    quantity nextQuantity nextQuantityFrom scheduledChanges { id effectiveOn appliesFrom quantity priceId proration } } } }`;
  const CANCEL = `mutation ($id: UUID!) { subscriptionScheduledChangeCancel(id: $id) { userErrors { field message code } } }`;

  it('several wait at once, apply in date order, and can be cancelled, the latest first', async () => {
    // given 1 seat from Mar 1, March billed
    const g = await given();
    const subscription = await subscribeSeats(g, 1);
    const itemId = subscription.items[0].id;
    await f.runBilling(g.env, midnight('2026-03-01'));

    // when three changes without proration are made: 4 from April, 6 and then 7 from May
    for (const [at, quantity] of [
      ['2026-03-10T00:00:00Z', 4],
      ['2026-04-10T00:00:00Z', 6],
      ['2026-04-11T00:00:00Z', 7],
    ] as const) {
      const update = await f.tryUpdate(g.env, subscription.id, {
        at,
        items: [{ id: itemId, quantity }],
        proration: 'none',
      });
      expect(update.userErrors).toEqual([]);
    }

    // then all three are visible, in order: April (the pending period) bills 4, May 6 then 7
    const item = (await gql(t, g.env, SCHEDULE, { id: subscription.id })).subscription.items[0];
    expect(item).toMatchObject({ quantity: 4, nextQuantity: 6, nextQuantityFrom: '2026-05-01' });
    expect(
      item.scheduledChanges.map((change: { appliesFrom: string; quantity: number }) => [
        change.appliesFrom,
        change.quantity,
      ]),
    ).toEqual([
      ['2026-04-01', 4],
      ['2026-05-01', 6],
      ['2026-05-01', 7],
    ]);
    const [first, , last] = item.scheduledChanges;

    // and a change dated before a waiting one is refused
    const early = await f.tryUpdate(g.env, subscription.id, {
      at: '2026-04-01T00:00:00Z',
      items: [{ id: itemId, quantity: 2 }],
      proration: 'none',
    });
    expect(early.userErrors).toEqual([
      {
        field: ['input', 'at'],
        message: expect.stringContaining('changes of an item are made in date order'),
        code: 'CONFLICT',
      },
    ]);

    // and only the latest can be cancelled
    const refused = (await gql(t, g.env, CANCEL, { id: first.id })).subscriptionScheduledChangeCancel;
    expect(refused.userErrors).toEqual([
      {
        field: null,
        message: 'a later change of this item is scheduled; cancel that one first',
        code: 'CONFLICT',
      },
    ]);
    expect(
      (await gql(t, g.env, CANCEL, { id: last.id })).subscriptionScheduledChangeCancel.userErrors,
    ).toEqual([]);

    // and the runs bill 4 in April and 6 in May
    await f.runBilling(g.env, midnight('2026-04-01'));
    await f.runBilling(g.env, midnight('2026-05-01'));
    const invoices = await f.invoicesOf(g.env, g.customerId);
    expect(invoices.map((invoice: { items: Line[] }) => invoice.items.map((line) => line.amount))).toEqual([
      [1000],
      [4000],
      [6000],
    ]);
    // and a change a billed period used can no longer be cancelled
    const used = (await gql(t, g.env, CANCEL, { id: first.id })).subscriptionScheduledChangeCancel;
    expect(used.userErrors[0].code).toBe('CONFLICT');
  });

  it('cancelling a prorated change drops its waiting proration lines', async () => {
    const g = await given();
    const subscription = await subscribeSeats(g, 1);
    await f.runBilling(g.env, midnight('2026-03-01'));
    await f.tryUpdate(g.env, subscription.id, {
      at: midnight('2026-03-12'),
      items: [{ id: subscription.items[0].id, quantity: 2 }],
    });
    expect(await count('proration_line', g.env)).toBe(2);
    const item = (await gql(t, g.env, SCHEDULE, { id: subscription.id })).subscription.items[0];
    expect(item.quantity).toBe(2);
    const cancelled = await gql(t, g.env, CANCEL, { id: item.scheduledChanges[0].id });
    expect(cancelled.subscriptionScheduledChangeCancel.userErrors).toEqual([]);
    expect(await count('proration_line', g.env)).toBe(0);
    await f.runBilling(g.env, midnight('2026-04-01'));
    const april = (await f.invoicesOf(g.env, g.customerId))[1];
    expect(april.items.map(show)).toEqual(['Basic | 2026-04-01..2026-05-01 | 1000']);
  });
});

describe('previews', () => {
  it('invoicePreview is exactly what the next run books, line for line, and writes nothing', async () => {
    // given March billed and a quantity change on Mar 12 waiting for April's invoice
    const g = await given();
    const subscription = await subscribeSeats(g, 3);
    await f.runBilling(g.env, midnight('2026-03-01'));
    await f.tryUpdate(g.env, subscription.id, {
      at: midnight('2026-03-12'),
      items: [{ id: subscription.items[0].id, quantity: 5 }],
    });
    const before = { invoices: await count('invoice', g.env) };

    // when the invoice of Apr 1 is previewed, for the customer and for the subscription
    const byCustomer = await preview(g.env, { customerId: g.customerId, asOf: midnight('2026-04-01') });
    const bySubscription = await preview(g.env, {
      subscriptionId: subscription.id,
      asOf: midnight('2026-04-01'),
    });

    // then nothing was written
    expect(await count('invoice', g.env)).toBe(before.invoices);
    const pending = await t.sql(
      'select id from proration_line where environment_id = $1 and invoice_id is null',
      [g.env.id],
    );
    expect(pending).toHaveLength(2);
    expect(bySubscription).toEqual(byCustomer);
    expect(byCustomer).toHaveLength(1);
    expect(byCustomer[0].items.map(show)).toEqual([
      'Basic | 2026-04-01..2026-05-01 | 5000',
      'Unused time on 3 × Seat from 12 Mar | 2026-03-12..2026-04-01 | -1935',
      'Remaining time on 5 × Seat from 12 Mar | 2026-03-12..2026-04-01 | 3226',
    ]);

    // and the run books the same invoice
    await f.runBilling(g.env, midnight('2026-04-01'));
    const booked = (await f.invoicesOf(g.env, g.customerId))[1];
    const figures = (invoice: { items: (Line & { taxAmount: number })[] }) =>
      invoice.items.map(
        ({ quantity, unitAmount, description, periodStart, periodEnd, amount, taxAmount }) => ({
          quantity,
          unitAmount,
          description,
          periodStart,
          periodEnd,
          amount,
          taxAmount,
        }),
      );
    expect(figures(booked)).toEqual(figures(byCustomer[0]));
    expect({
      currency: booked.currency,
      date: booked.date,
      totalExclVat: booked.totalExclVat,
      totalVat: booked.totalVat,
      totalInclVat: booked.totalInclVat,
    }).toEqual({
      currency: byCustomer[0].currency,
      date: byCustomer[0].date,
      totalExclVat: byCustomer[0].totalExclVat,
      totalVat: byCustomer[0].totalVat,
      totalInclVat: byCustomer[0].totalInclVat,
    });
    // after the run nothing is due
    expect(await preview(g.env, { customerId: g.customerId, asOf: midnight('2026-04-01') })).toEqual([]);
  });

  it('a previewed change or cancellation answers its lines and changes nothing', async () => {
    const g = await given();
    const subscription = await subscribeSeats(g, 3);
    await f.runBilling(g.env, midnight('2026-03-01'));
    const update = await f.tryUpdate(
      g.env,
      subscription.id,
      {
        at: midnight('2026-03-12'),
        items: [{ id: subscription.items[0].id, quantity: 5 }],
        proration: 'invoice_now',
      },
      { preview: true },
    );
    expect(update.userErrors).toEqual([]);
    expect(update.prorationLines.map((line: { amount: number }) => line.amount)).toEqual([-1935, 3226]);
    expect(update.subscription.items[0].quantity).toBe(3);
    const cancel = await f.tryCancel(g.env, subscription.id, midnight('2026-03-21'), { preview: true });
    expect(cancel.prorationLines.map((line: { amount: number }) => line.amount)).toEqual([-1065]);
    expect(cancel.subscription.status).toBe('active');
    expect(await count('subscription_change', g.env)).toBe(0);
    expect(await count('proration_line', g.env)).toBe(0);
    expect(await count('invoice', g.env)).toBe(1);
  });
});
