import { describe, expect, it } from 'vitest';
import { gql } from '../support/catalog.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { billingFixtures } from './fixtures.ts';

const t = setupTestApp();
const f = billingFixtures(t);

const ITEMS = `query ($id: UUID!) { subscription(id: $id) { status cancelledAt items { id endsOn billAt
  scheduledChanges { id effectiveOn appliesFrom quantity priceId removes proration } } } }`;
const CANCEL = `mutation ($id: UUID!) { subscriptionScheduledChangeCancel(id: $id) { userErrors { field message code } } }`;

const count = async (table: string, env: TestEnvironment) =>
  Number(
    (await t.sql<{ n: string }>(`select count(*) as n from ${table} where environment_id = $1`, [env.id]))[0]
      ?.n,
  );

/** A test environment whose customer lives on a clock frozen at Mar 12, with two monthly seats products. */
async function given() {
  const env = await t.createEnvironment('Removals', { kind: 'test' });
  const clock = (
    await gql(
      t,
      env,
      'mutation ($input: TestClockCreateInput!) { testClockCreate(input: $input) { testClock { id } userErrors { message } } }',
      { input: { name: 'Mar 12', frozenTime: '2026-03-12T10:00:00Z' } },
    )
  ).testClockCreate.testClock;
  const customerId = await f.createCustomer(env, { testClockId: clock.id });
  const seat = await f.createProduct(env, { name: 'Seat' });
  const support = await f.createProduct(env, { name: 'Support' });
  const price = await f.createPrice(env, { name: 'Basic', pricing: { eur: { amount: 1000 } } });
  const subscribe = (start: string) =>
    f.subscribe(env, {
      customerId,
      term: { start },
      items: [
        { productId: seat.id, priceId: price.id, quantity: 3 },
        { productId: support.id, priceId: price.id, quantity: 1 },
      ],
    });
  return { env, subscribe };
}

const itemsOf = async (env: TestEnvironment, id: string) => (await gql(t, env, ITEMS, { id })).subscription;

describe('scheduled removals', () => {
  it('a removal waits on the item as a scheduled change and cancelling it keeps the item', async () => {
    const { env, subscribe } = await given();
    const subscription = await subscribe('2026-03-01');
    const [seat, support] = subscription.items;

    // when the seat item is removed on the clock's Mar 12, with its unused days credited
    const removed = await f.tryUpdate(env, subscription.id, { removeItemIds: [seat.id] });
    expect(removed.userErrors).toEqual([]);
    expect(removed.prorationLines.map((line: { kind: string }) => line.kind)).toEqual(['unused']);

    // then the removal is a scheduled change of the item, from the next period on
    const after = await itemsOf(env, subscription.id);
    expect(after.items[0]).toMatchObject({
      endsOn: '2026-04-01',
      scheduledChanges: [
        {
          effectiveOn: '2026-03-12',
          appliesFrom: '2026-04-01',
          quantity: null,
          priceId: null,
          removes: true,
          proration: 'create',
        },
      ],
    });
    expect(after.items[1].scheduledChanges).toEqual([]);

    // when it is cancelled, the item goes on and the credit is gone
    const cancelled = await gql(t, env, CANCEL, { id: after.items[0].scheduledChanges[0].id });
    expect(cancelled.subscriptionScheduledChangeCancel.userErrors).toEqual([]);
    const kept = await itemsOf(env, subscription.id);
    expect(kept.items[0]).toMatchObject({ id: seat.id, endsOn: null, scheduledChanges: [] });
    expect(kept.items[0].billAt).not.toBeNull();
    expect(kept.items[1]).toMatchObject({ id: support.id, endsOn: null });
    expect(await count('proration_line', env)).toBe(0);

    // and cancelling it again is refused
    const again = await gql(t, env, CANCEL, { id: after.items[0].scheduledChanges[0].id });
    expect(again.subscriptionScheduledChangeCancel.userErrors).toEqual([
      { field: null, message: 'the change is already cancelled', code: 'CONFLICT' },
    ]);
  });

  it('a cancellation puts a removal on every item; cancelling one takes the cancellation back', async () => {
    const { env, subscribe } = await given();
    const subscription = await subscribe('2026-03-01');
    const cancel = await f.tryCancel(env, subscription.id);
    expect(cancel.userErrors).toEqual([]);
    expect(cancel.subscription.status).toBe('cancelled');

    const after = await itemsOf(env, subscription.id);
    for (const item of after.items) {
      expect(item.endsOn).toBe('2026-04-01');
      expect(item.scheduledChanges).toMatchObject([{ removes: true, appliesFrom: '2026-04-01' }]);
    }
    expect(await count('proration_line', env)).toBe(2);

    const undone = await gql(t, env, CANCEL, { id: after.items[1].scheduledChanges[0].id });
    expect(undone.subscriptionScheduledChangeCancel.userErrors).toEqual([]);
    const active = await itemsOf(env, subscription.id);
    expect(active).toMatchObject({ status: 'active', cancelledAt: null });
    for (const item of active.items) expect(item).toMatchObject({ endsOn: null, scheduledChanges: [] });
    expect(await count('proration_line', env)).toBe(0);
  });

  it('a removal whose day has come can no longer be cancelled', async () => {
    const { env, subscribe } = await given();
    const subscription = await subscribe('2026-01-01');
    const removed = await f.tryUpdate(env, subscription.id, {
      at: '2026-02-10T00:00:00Z',
      removeItemIds: [subscription.items[0].id],
      proration: 'none',
    });
    expect(removed.userErrors).toEqual([]);
    const change = (await itemsOf(env, subscription.id)).items[0].scheduledChanges[0];
    expect(change).toMatchObject({ removes: true, appliesFrom: '2026-03-01' });
    const refused = await gql(t, env, CANCEL, { id: change.id });
    expect(refused.subscriptionScheduledChangeCancel.userErrors).toEqual([
      {
        field: null,
        message: 'the item ended on 2026-03-01; the removal can no longer be cancelled',
        code: 'CONFLICT',
      },
    ]);
  });
});
