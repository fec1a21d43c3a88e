import { beforeAll, describe, expect, it } from 'vitest';
import { billingFixtures, midnight } from '../subscription/fixtures.ts';
import { gql } from '../support/catalog.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = billingFixtures(t);

const CUSTOMER = 'id timezone';

async function customerCreate(env: TestEnvironment, input: Record<string, unknown>) {
  return (
    await gql(
      t,
      env,
      `mutation ($input: CustomerCreateInput!) {
        customerCreate(input: $input) { customer { ${CUSTOMER} } userErrors { field message code } }
      }`,
      { input: { name: 'Zoned', currency: 'EUR', ...input } },
    )
  ).customerCreate;
}

describe('time zones of environments and customers', () => {
  it('a customer gets the environment time zone unless it names its own, in canonical spelling', async () => {
    // given an environment whose customers live in Berlin by default
    const env = await t.createEnvironment('Berlin', { timezone: 'Europe/Berlin' });
    // when customers are created with and without a zone
    const inherited = await customerCreate(env, {});
    const own = await customerCreate(env, { timezone: 'asia/kolkata' });
    // then
    expect((await gql(t, env, '{ environment { timezone } }')).environment.timezone).toBe('Europe/Berlin');
    expect(inherited).toEqual({
      customer: { id: expect.any(String), timezone: 'Europe/Berlin' },
      userErrors: [],
    });
    expect(own.customer.timezone).toBe('Asia/Kolkata');
    const [row] = await t.sql('select timezone from customer where id = $1', [own.customer.id]);
    expect(row).toEqual({ timezone: 'Asia/Kolkata' });
  });

  it('an environment without a zone is UTC', async () => {
    const env = await t.createEnvironment('Plain');
    expect((await gql(t, env, '{ environment { timezone } }')).environment.timezone).toBe('UTC');
    expect((await customerCreate(env, {})).customer.timezone).toBe('UTC');
  });

  it.each(['Mars/Olympus_Mons', '+01:00', 'CEST', ''])(
    'refuses the time zone "%s", naming the field',
    async (zone) => {
      const env = await t.createEnvironment('Refusals');
      const id = (await customerCreate(env, {})).customer.id;
      const refusal = {
        code: 'INVALID_INPUT',
        errors: [{ pointer: '/input/timezone', detail: expect.stringContaining('IANA time zone') }],
      };
      const created = await t.graphql(
        'mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } } }',
        { input: { name: 'Zoned', timezone: zone } },
        { env },
      );
      expect(created.body.errors[0].extensions).toEqual(refusal);
      const updated = await t.graphql(
        'mutation ($id: UUID!, $input: CustomerUpdateInput!) { customerUpdate(id: $id, input: $input) { customer { id } } }',
        { id, input: { timezone: zone } },
        { env },
      );
      expect(updated.body.errors[0].extensions).toEqual(refusal);
      const rows = await t.sql('select timezone from customer where environment_id = $1', [env.id]);
      expect(rows).toEqual([{ timezone: 'UTC' }]);
    },
  );

  it('REST keeps to the contract: the customer response has no timezone and PATCH takes none', async () => {
    const env = await t.createEnvironment('Rest');
    const id = (await customerCreate(env, { timezone: 'Europe/Berlin' })).customer.id;
    const read = await t.rest('GET', `/customers/${id}`, { env });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('timezone');
    const patched = await t.rest('PATCH', `/customers/${id}`, {
      env,
      body: { name: 'Zoned', timezone: 'Mars/Base' },
    });
    // an unknown member is refused as the contract's other bodies are, and nothing changes
    expect(patched.status).toBe(400);
    const [row] = await t.sql('select timezone from customer where id = $1', [id]);
    expect(row).toEqual({ timezone: 'Europe/Berlin' });
  });
});

/**
 * Monthly subscriptions starting on a month end, in advance: each case names the instants local
 * midnight of its boundaries falls on, across the zone's clock changes.
 */
const CASES: { zone: string; start: string; boundaries: [string, string][] }[] = [
  {
    // Berlin moves to summer time on 2026-03-29: the period Mar 31 – Apr 30 begins at 22:00 UTC.
    zone: 'Europe/Berlin',
    start: '2026-01-31',
    boundaries: [
      ['2026-01-31', '2026-01-30T23:00:00.000Z'],
      ['2026-02-28', '2026-02-27T23:00:00.000Z'],
      ['2026-03-31', '2026-03-30T22:00:00.000Z'],
      ['2026-04-30', '2026-04-29T22:00:00.000Z'],
    ],
  },
  {
    // New York moves to summer time on 2026-03-08, inside the period Mar 1 – Apr 1.
    zone: 'America/New_York',
    start: '2026-03-01',
    boundaries: [
      ['2026-03-01', '2026-03-01T05:00:00.000Z'],
      ['2026-04-01', '2026-04-01T04:00:00.000Z'],
      ['2026-05-01', '2026-05-01T04:00:00.000Z'],
    ],
  },
  {
    // Kolkata keeps +05:30 all year; a leap-year February ends on the 29th.
    zone: 'Asia/Kolkata',
    start: '2028-01-31',
    boundaries: [
      ['2028-01-31', '2028-01-30T18:30:00.000Z'],
      ['2028-02-29', '2028-02-28T18:30:00.000Z'],
      ['2028-03-31', '2028-03-30T18:30:00.000Z'],
    ],
  },
  {
    // Apia keeps +13:00 (no summer time since 2021): its days begin the day before in UTC.
    zone: 'Pacific/Apia',
    start: '2026-12-31',
    boundaries: [
      ['2026-12-31', '2026-12-30T11:00:00.000Z'],
      ['2027-01-31', '2027-01-30T11:00:00.000Z'],
      ['2027-02-28', '2027-02-27T11:00:00.000Z'],
    ],
  },
  {
    // UTC, as before time zones: midnight UTC.
    zone: 'UTC',
    start: '2026-01-31',
    boundaries: [
      ['2026-01-31', '2026-01-31T00:00:00.000Z'],
      ['2026-02-28', '2026-02-28T00:00:00.000Z'],
      ['2026-03-31', '2026-03-31T00:00:00.000Z'],
    ],
  },
];

describe('periods begin at local midnight of the customer', () => {
  let env: TestEnvironment;
  let product: { id: string };

  beforeAll(async () => {
    env = await t.createEnvironment('Zones', { kind: 'test' });
    product = await f.createProduct(env, { name: 'Seats', handle: 'seats' });
  });

  it.each(CASES)('$zone: each period is billed at its local midnight, not a moment before', async (c) => {
    // (an environment of its own, so no other customer's periods are due in its runs)
    const env = await t.createEnvironment(c.zone, { kind: 'test' });
    const product = await f.createProduct(env, { name: 'Seats', handle: 'seats' });
    const price = await f.createPrice(env, { name: 'Seat', pricing: { eur: { amount: 1000 } } });
    // given a customer in the zone with a monthly subscription starting on a month end
    const customerId = (await customerCreate(env, { timezone: c.zone })).customer.id;
    const subscription = await f.subscribe(env, {
      customerId,
      term: { start: c.start },
      items: [{ productId: product.id, priceId: price.id, quantity: 2 }],
    });
    const [row] = await t.sql('select timezone from subscription where id = $1', [subscription.id]);
    expect(row).toEqual({ timezone: c.zone });

    for (const [n, [date, instant]] of c.boundaries.slice(0, -1).entries()) {
      const end = (c.boundaries[n + 1] as [string, string])[0];
      const [item] = (
        await gql(
          t,
          env,
          `query ($id: UUID!) { subscription(id: $id) { items { billAt period { start end } } } }`,
          { id: subscription.id },
        )
      ).subscription.items;
      expect(item).toEqual({ billAt: instant, period: { start: date, end } });

      // when a run comes a millisecond before local midnight, then at it
      const early = await f.runBilling(env, new Date(new Date(instant).getTime() - 1).toISOString());
      const onTime = await f.runBilling(env, instant);

      // then only the second bills the period, with its local dates
      expect(early.periodCount).toBe(0);
      expect(onTime.periodCount).toBe(1);
    }
    const lines = (await f.invoicesOf(env, customerId)).flatMap(
      (invoice: { items: unknown[] }) => invoice.items,
    );
    expect(
      lines.map((line: { periodStart: string; periodEnd: string }) => [line.periodStart, line.periodEnd]),
    ).toEqual(
      c.boundaries.slice(0, -1).map(([date], n) => [date, (c.boundaries[n + 1] as [string, string])[0]]),
    );
    const billed = await t.sql(
      `select to_char(period_start, 'YYYY-MM-DD') as start from billed_period b
       join subscription_item i on i.id = b.subscription_item_id where i.subscription_id = $1 order by period_start`,
      [subscription.id],
    );
    expect(billed.map((b) => b.start)).toEqual(c.boundaries.slice(0, -1).map(([date]) => date));
  });

  it('usage counts in the local period: an event at 23:30 UTC on Jan 31 is February in Berlin', async () => {
    // given a Berlin customer with a monthly usage-based item starting Jan 1
    const usage = await f.createPrice(env, {
      name: 'Calls',
      method: 'event_based',
      pricing: { eur: { amount: 10 } },
    });
    const customerId = (await customerCreate(env, { timezone: 'Europe/Berlin' })).customer.id;
    const subscription = await f.subscribe(env, {
      customerId,
      term: { start: '2026-01-01' },
      items: [{ productId: product.id, priceId: usage.id }],
    });
    const itemId = subscription.items[0].id;
    // when usage is recorded either side of Berlin's midnight, and January is billed
    for (const [timestamp, quantity] of [
      ['2026-01-31T22:59:59Z', 3],
      ['2026-01-31T23:00:00Z', 5],
    ] as const) {
      const recorded = await f.tryRecordUsage(env, {
        subscriptionItemId: itemId,
        quantity,
        timestamp,
        idempotencyKey: timestamp,
      });
      expect(recorded.userErrors).toEqual([]);
    }
    const run = await f.runBilling(env, '2026-01-31T23:00:00.000Z');
    // then January bills the 3 calls before local midnight only
    expect(run.periodCount).toBe(1);
    const [invoice] = await f.invoicesOf(env, customerId);
    expect(invoice.items).toMatchObject([
      { quantity: 3, periodStart: '2026-01-01', periodEnd: '2026-02-01' },
    ]);
    expect(midnight('2026-02-01')).not.toBe(run.asOf);
  });
});
