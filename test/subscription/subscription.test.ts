import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { billingFixtures, midnight } from './fixtures.ts';

const t = setupTestApp();
const f = billingFixtures(t);

describe('subscriptions', () => {
  let env: TestEnvironment;
  let customerId: string;
  let product: { id: string; name: string };
  let advance: { id: string; name: string };
  let arrears: { id: string; name: string };
  let usage: { id: string; name: string };
  let dollarsOnly: { id: string; name: string };

  beforeAll(async () => {
    env = await t.createEnvironment();
    customerId = await f.createCustomer(env, { name: 'Acme', currency: 'EUR' });
    product = await f.createProduct(env, { name: 'Seats', handle: 'seats' });
    advance = await f.createPrice(env, { name: 'Monthly seat', pricing: { eur: { amount: 1000 } } });
    arrears = await f.createPrice(env, {
      name: 'Monthly seat in arrears',
      method: 'arrears',
      pricing: { eur: { amount: 1000 } },
    });
    usage = await f.createPrice(env, {
      name: 'API calls',
      method: 'event_based',
      pricing: { eur: { amount: 0.25 } },
    });
    dollarsOnly = await f.createPrice(env, { name: 'Dollar seat', pricing: { usd: { amount: 1200 } } });
  });

  describe('subscriptionCreate and GET /subscriptions/{id}', () => {
    it('creates a subscription whose REST document is exactly contract 2.10', async () => {
      // given a termed, renewing subscription with an advance and an arrears item
      const created = await f.subscribe(env, {
        customerId,
        handle: 'acme-seats',
        currency: 'eur',
        term: { start: '2026-03-31', end: '2027-03-31' },
        autoRenewal: true,
        items: [
          { productId: product.id, priceId: advance.id, quantity: 5 },
          { productId: product.id, priceId: arrears.id, quantity: 2.5 },
        ],
      });
      expect(created).toMatchObject({
        handle: 'acme-seats',
        currency: 'EUR',
        status: 'active',
        autoRenewal: true,
        cancelledAt: null,
        customer: { id: customerId },
        term: { start: '2026-03-31', end: '2027-03-31' },
      });

      // when it is read through the documented path
      const response = await t.rest('GET', `/subscriptions/${created.id}`, { env });

      // then every field of 2.10 is there, and nothing else; advance bills at the period start, arrears at its end
      expect(response.status).toBe(200);
      const [first, second] = created.items;
      expect(response.body).toEqual({
        id: created.id,
        handle: 'acme-seats',
        currency: 'EUR',
        term: { start: '2026-03-31', end: '2027-03-31' },
        autoRenewal: true,
        items: [
          {
            id: first.id,
            billAt: '2026-03-31T00:00:00.000Z',
            period: { start: '2026-03-31', end: '2026-04-30' },
            quantity: 5,
            product: { id: product.id, name: 'Seats' },
            price: { id: advance.id, name: 'Monthly seat' },
          },
          {
            id: second.id,
            billAt: '2026-04-30T00:00:00.000Z',
            period: { start: '2026-03-31', end: '2026-04-30' },
            quantity: 2.5,
            product: { id: product.id, name: 'Seats' },
            price: { id: arrears.id, name: 'Monthly seat in arrears' },
          },
        ],
        createdAt: created.createdAt,
      });
    });

    it('falls back to the customer’s currency and shows an open-ended term with a null end', async () => {
      const created = await f.subscribe(env, {
        customerId,
        term: { start: '2026-01-01' },
        items: [{ productId: product.id, priceId: advance.id }],
      });
      expect(created).toMatchObject({
        currency: 'EUR',
        handle: null,
        autoRenewal: false,
        term: { end: null },
      });
      expect(created.items[0].quantity).toBe(1);
      const response = await t.rest('GET', `/subscriptions/${created.id}`, { env });
      expect(response.body).toMatchObject({ handle: null, term: { start: '2026-01-01', end: null } });
    });

    it('refuses a price without pricing in the subscription’s currency, naming it, and writes nothing', async () => {
      // given a price with only USD pricing
      const before = await t.sql(
        'select count(*)::int as count from subscription where environment_id = $1',
        [env.id],
      );

      // when it is put on a EUR subscription
      const payload = await f.trySubscribe(env, {
        customerId,
        term: { start: '2026-01-01' },
        items: [
          { productId: product.id, priceId: advance.id },
          { productId: product.id, priceId: dollarsOnly.id },
        ],
      });

      // then a userError names the price and the currency
      expect(payload).toEqual({
        subscription: null,
        userErrors: [
          {
            field: ['input', 'items', '1', 'priceId'],
            message: `price "Dollar seat" (${dollarsOnly.id}) has no pricing in EUR`,
            code: 'INVALID_REFERENCE',
          },
        ],
      });
      const after = await t.sql('select count(*)::int as count from subscription where environment_id = $1', [
        env.id,
      ]);
      expect(after).toEqual(before);
    });

    it('names every unknown customer, product and price', async () => {
      const unknownCustomer = await f.trySubscribe(env, {
        customerId: randomUUID(),
        term: { start: '2026-01-01' },
        items: [{ productId: product.id, priceId: advance.id }],
      });
      expect(unknownCustomer.userErrors).toEqual([
        { field: ['input', 'customerId'], message: expect.any(String), code: 'INVALID_REFERENCE' },
      ]);
      const unknownItems = await f.trySubscribe(env, {
        customerId,
        term: { start: '2026-01-01' },
        items: [{ productId: randomUUID(), priceId: randomUUID() }],
      });
      expect(unknownItems.userErrors.map((error: { field: string[] }) => error.field)).toEqual([
        ['input', 'items', '0', 'productId'],
        ['input', 'items', '0', 'priceId'],
      ]);
      const noCurrency = await f.createCustomer(env, { name: 'No currency', currency: null });
      const withoutCurrency = await f.trySubscribe(env, {
        customerId: noCurrency,
        term: { start: '2026-01-01' },
        items: [{ productId: product.id, priceId: advance.id }],
      });
      expect(withoutCurrency.userErrors).toEqual([
        {
          field: ['input', 'currency'],
          message: expect.stringContaining('required'),
          code: 'INVALID_REFERENCE',
        },
      ]);
    });

    it('refuses a product or price of another environment as unknown', async () => {
      const other = await t.createEnvironment('Other');
      const foreignPrice = await f.createPrice(other, { pricing: { eur: { amount: 1 } } });
      const payload = await f.trySubscribe(env, {
        customerId,
        term: { start: '2026-01-01' },
        items: [{ productId: product.id, priceId: foreignPrice.id }],
      });
      expect(payload.userErrors).toEqual([
        {
          field: ['input', 'items', '0', 'priceId'],
          message: 'no price of this environment has this id',
          code: 'INVALID_REFERENCE',
        },
      ]);
    });

    it('refuses a duplicate handle', async () => {
      const input = {
        customerId,
        handle: 'twice',
        term: { start: '2026-01-01' },
        items: [{ productId: product.id, priceId: advance.id }],
      };
      await f.subscribe(env, input);
      const again = await f.trySubscribe(env, input);
      expect(again.userErrors).toEqual([
        { field: ['input', 'handle'], message: expect.any(String), code: 'DUPLICATE' },
      ]);
    });

    it.each([
      [{ items: [] }, '/input/items', 'must list at least one item'],
      [{ term: { start: '2026-02-01', end: '2026-02-01' } }, '/input/term/end', 'must be after start'],
      [{ autoRenewal: true }, '/input/autoRenewal', 'needs a term end: only a termed subscription renews'],
      [{ currency: 'XYZ' }, '/input/currency', 'XYZ is not a supported ISO 4217 currency code'],
      [{ items: [{ quantity: -1 }] }, '/input/items/0/quantity', 'must not be negative'],
      [{ items: [{ quantity: 0.0000001 }] }, '/input/items/0/quantity', 'must have at most 6 decimal places'],
    ])('refuses input %o as INVALID_INPUT', async (change, pointer, detail) => {
      const { items, ...rest } = change as { items?: Record<string, unknown>[] };
      const response = await t.graphql(
        `mutation ($input: SubscriptionCreateInput!) { subscriptionCreate(input: $input) { subscription { id } } }`,
        {
          input: {
            customerId,
            term: { start: '2026-01-01' },
            items: items?.map((item) => ({ productId: product.id, priceId: advance.id, ...item })) ?? [
              { productId: product.id, priceId: advance.id },
            ],
            ...rest,
          },
        },
        { env },
      );
      expect(response.body.errors[0].extensions).toMatchObject({
        code: 'INVALID_INPUT',
        errors: [{ pointer, detail }],
      });
    });

    it('answers 404 for an unknown id, or another environment’s, and 400 for a malformed one', async () => {
      const other = await t.createEnvironment('Elsewhere');
      const foreignCustomer = await f.createCustomer(other);
      const foreignProduct = await f.createProduct(other);
      const foreignPrice = await f.createPrice(other, { pricing: { eur: { amount: 1 } } });
      const foreign = await f.subscribe(other, {
        customerId: foreignCustomer,
        term: { start: '2026-01-01' },
        items: [{ productId: foreignProduct.id, priceId: foreignPrice.id }],
      });
      expectProblem(await t.rest('GET', `/subscriptions/${foreign.id}`, { env }), 404);
      expectProblem(await t.rest('GET', `/subscriptions/${randomUUID()}`, { env }), 404);
      expectProblem(await t.rest('GET', '/subscriptions/not-a-uuid', { env }), 400);
      const data = await t.graphql(
        'query ($id: UUID!) { subscription(id: $id) { id } }',
        { id: foreign.id },
        { env },
      );
      expect(data.body.data.subscription).toBeNull();
    });

    it('lists subscriptions by customer and status', async () => {
      const listed = await t.graphql(
        `query ($customerId: UUID!) { subscriptions(first: 50, filter: { customerId: $customerId, status: active }) {
          edges { node { id customer { id } status } } } }`,
        { customerId },
        { env },
      );
      const nodes = listed.body.data.subscriptions.edges.map((edge: { node: unknown }) => edge.node);
      expect(nodes.length).toBeGreaterThan(0);
      for (const node of nodes)
        expect(node).toMatchObject({ customer: { id: customerId }, status: 'active' });
    });
  });

  describe('subscriptionUpdate: from each item’s next period on', () => {
    it('changes the quantity of an advance item for its next (unbilled) period, and schedules it for an arrears item', async () => {
      // given a subscription started Jan 1 with both kinds, billed for January (advance) as of Jan 1
      const subscription = await f.subscribe(env, {
        customerId,
        term: { start: '2026-01-01' },
        items: [
          { productId: product.id, priceId: advance.id, quantity: 2 },
          { productId: product.id, priceId: arrears.id, quantity: 2 },
        ],
      });
      const [advanceItem, arrearsItem] = subscription.items;
      await f.runBilling(env, midnight('2026-01-01'));

      // when both quantities change on Jan 15
      const payload = await f.tryUpdate(env, subscription.id, {
        at: '2026-01-15T12:00:00Z',
        items: [
          { id: advanceItem.id, quantity: 5 },
          { id: arrearsItem.id, quantity: 7 },
        ],
      });

      // then the advance item's pending period is February: it takes 5 at once; the arrears item
      // still bills January at 2 and takes 7 from February on
      expect(payload.userErrors).toEqual([]);
      expect(payload.subscription.items).toMatchObject([
        { id: advanceItem.id, quantity: 5, nextQuantity: null, nextQuantityFrom: null },
        { id: arrearsItem.id, quantity: 2, nextQuantity: 7, nextQuantityFrom: '2026-02-01' },
      ]);
    });

    it('changes an item not yet started at once', async () => {
      const subscription = await f.subscribe(env, {
        customerId,
        term: { start: '2026-06-01' },
        items: [{ productId: product.id, priceId: arrears.id, quantity: 2 }],
      });
      const payload = await f.tryUpdate(env, subscription.id, {
        at: '2026-05-01T00:00:00Z',
        items: [{ id: subscription.items[0].id, quantity: 4 }],
      });
      expect(payload.subscription.items[0]).toMatchObject({ quantity: 4, nextQuantity: null });
    });

    it('adds items from their next period boundary and removes items after the period under way', async () => {
      // given a subscription started Jan 1 with an advance and an arrears item
      const subscription = await f.subscribe(env, {
        customerId,
        term: { start: '2026-01-01' },
        items: [
          { productId: product.id, priceId: advance.id },
          { productId: product.id, priceId: arrears.id },
        ],
      });
      const [advanceItem, arrearsItem] = subscription.items;

      // when on Jan 15 both are removed and a new item is added
      const payload = await f.tryUpdate(env, subscription.id, {
        at: '2026-01-15T00:00:00Z',
        removeItemIds: [advanceItem.id, arrearsItem.id],
        addItems: [{ productId: product.id, priceId: advance.id, quantity: 3 }],
      });

      // then both end on Feb 1: the advance item bills January only (at Jan 1), the arrears item
      // still bills January (at Feb 1); the new item starts Feb 1
      expect(payload.userErrors).toEqual([]);
      expect(payload.subscription.items).toMatchObject([
        { id: advanceItem.id, endsOn: '2026-02-01', billAt: midnight('2026-01-01') },
        { id: arrearsItem.id, endsOn: '2026-02-01', billAt: midnight('2026-02-01') },
        { startsOn: '2026-02-01', endsOn: null, quantity: 3, billAt: midnight('2026-02-01') },
      ]);
    });

    it('refuses unknown items, renewal of an open-ended subscription, and changes after cancellation', async () => {
      const subscription = await f.subscribe(env, {
        customerId,
        term: { start: '2026-01-01' },
        items: [{ productId: product.id, priceId: advance.id }],
      });
      const unknown = await f.tryUpdate(env, subscription.id, {
        items: [{ id: randomUUID(), quantity: 1 }],
        removeItemIds: [randomUUID()],
      });
      expect(
        unknown.userErrors.map((error: { field: string[]; code: string }) => [error.field, error.code]),
      ).toEqual([
        [['input', 'items', '0', 'id'], 'INVALID_REFERENCE'],
        [['input', 'removeItemIds', '0'], 'INVALID_REFERENCE'],
      ]);
      const renewal = await f.tryUpdate(env, subscription.id, { autoRenewal: true });
      expect(renewal.userErrors).toEqual([
        { field: ['input', 'autoRenewal'], message: expect.any(String), code: 'INVALID_INPUT' },
      ]);
      const cancelled = await f.tryCancel(env, subscription.id, '2026-02-15T00:00:00Z');
      expect(cancelled.userErrors).toEqual([]);
      const afterCancel = await f.tryUpdate(env, subscription.id, { items: [] });
      expect(afterCancel.userErrors).toEqual([
        {
          field: null,
          message: 'the subscription is cancelled; only an active subscription can change',
          code: 'CONFLICT',
        },
      ]);
      const again = await f.tryCancel(env, subscription.id);
      expect(again.userErrors[0].code).toBe('CONFLICT');
      const missing = await f.tryCancel(env, randomUUID());
      expect(missing.userErrors[0].code).toBe('NOT_FOUND');
    });

    it('records the changes in the audit trail with the operation that made them', async () => {
      const subscription = await f.subscribe(env, {
        customerId,
        term: { start: '2026-01-01' },
        items: [{ productId: product.id, priceId: advance.id }],
      });
      await f.tryUpdate(env, subscription.id, {
        at: '2025-12-01T00:00:00Z',
        items: [{ id: subscription.items[0].id, quantity: 9 }],
      });
      const events = await t.sql<{ operation: string; action: string; changed_fields: string[] }>(
        'select operation, action, changed_fields from audit_event where object_id = $1 order by id',
        [subscription.items[0].id],
      );
      expect(events).toEqual([
        { operation: 'subscriptionCreate', action: 'create', changed_fields: [] },
        { operation: 'subscriptionUpdate', action: 'update', changed_fields: ['updatedAt'] },
      ]);
      // The quantity itself is a scheduled change of the item, created by the same operation.
      const changes = await t.sql<{ operation: string; action: string }>(
        `select a.operation, a.action from audit_event a join subscription_change c on c.id::text = a.object_id
         where c.subscription_item_id = $1`,
        [subscription.items[0].id],
      );
      expect(changes).toEqual([{ operation: 'subscriptionUpdate', action: 'create' }]);
    });
  });

  describe('usageRecord', () => {
    let itemId: string;
    let subscriptionId: string;

    beforeAll(async () => {
      const subscription = await f.subscribe(env, {
        customerId,
        term: { start: '2026-01-01' },
        items: [{ productId: product.id, priceId: usage.id }],
      });
      subscriptionId = subscription.id;
      itemId = subscription.items[0].id;
      expect(subscription.items[0]).toMatchObject({ method: 'event_based', billAt: midnight('2026-02-01') });
    });

    it('records usage once per idempotency key', async () => {
      const args = {
        subscriptionItemId: itemId,
        quantity: 120,
        timestamp: '2026-01-10T08:00:00Z',
        idempotencyKey: 'evt-1',
      };
      const first = await f.tryRecordUsage(env, args);
      const second = await f.tryRecordUsage(env, args);
      expect(first).toEqual({
        usageRecord: {
          id: expect.any(String),
          subscriptionItemId: itemId,
          quantity: 120,
          timestamp: '2026-01-10T08:00:00.000Z',
          idempotencyKey: 'evt-1',
        },
        userErrors: [],
      });
      expect(second).toEqual(first);
      const rows = await t.sql(
        'select count(*)::int as count from usage_record where subscription_item_id = $1',
        [itemId],
      );
      expect(rows).toEqual([{ count: 1 }]);

      const reused = await f.tryRecordUsage(env, { ...args, quantity: 121 });
      expect(reused.userErrors).toEqual([
        { field: ['input', 'idempotencyKey'], message: expect.any(String), code: 'DUPLICATE' },
      ]);
    });

    it('refuses usage outside the item’s unbilled periods and on items not billed by usage', async () => {
      const before = await f.tryRecordUsage(env, {
        subscriptionItemId: itemId,
        quantity: 1,
        timestamp: '2025-12-31T23:59:59Z',
        idempotencyKey: 'early',
      });
      expect(before.userErrors).toEqual([
        {
          field: ['input', 'timestamp'],
          message: "is before the item's first period, which starts on 2026-01-01",
          code: 'CONFLICT',
        },
      ]);

      const advanceSubscription = await f.subscribe(env, {
        customerId,
        term: { start: '2026-01-01' },
        items: [{ productId: product.id, priceId: advance.id }],
      });
      const wrongItem = await f.tryRecordUsage(env, {
        subscriptionItemId: advanceSubscription.items[0].id,
        quantity: 1,
        timestamp: '2026-01-10T00:00:00Z',
        idempotencyKey: 'wrong',
      });
      expect(wrongItem.userErrors[0]).toMatchObject({
        field: ['input', 'subscriptionItemId'],
        code: 'INVALID_REFERENCE',
      });

      const unknown = await f.tryRecordUsage(env, {
        subscriptionItemId: randomUUID(),
        quantity: 1,
        timestamp: '2026-01-10T00:00:00Z',
        idempotencyKey: 'unknown',
      });
      expect(unknown.userErrors[0].code).toBe('NOT_FOUND');

      const zero = await t.graphql(
        `mutation { usageRecord(subscriptionItemId: "${itemId}", quantity: 0, timestamp: "2026-01-10T00:00:00Z", idempotencyKey: "z") { userErrors { code } } }`,
        {},
        { env },
      );
      expect(zero.body.errors[0].extensions).toMatchObject({
        code: 'INVALID_INPUT',
        errors: [{ pointer: '/quantity', detail: 'must be more than 0' }],
      });
    });

    it('refuses usage in a period that has been billed', async () => {
      await f.runBilling(env, midnight('2026-02-01'));
      const late = await f.tryRecordUsage(env, {
        subscriptionItemId: itemId,
        quantity: 1,
        timestamp: '2026-01-31T23:00:00Z',
        idempotencyKey: 'late',
      });
      expect(late.userErrors).toEqual([
        {
          field: ['input', 'timestamp'],
          message: 'falls in the period 2026-01-01 to 2026-02-01, which has already been billed',
          code: 'CONFLICT',
        },
      ]);
      const next = await f.tryRecordUsage(env, {
        subscriptionItemId: itemId,
        quantity: 1,
        timestamp: '2026-02-01T00:00:00Z',
        idempotencyKey: 'next',
      });
      expect(next.userErrors).toEqual([]);
      expect(subscriptionId).toBeDefined();
    });
  });
});
