import type { JobHelpers, Task } from 'graphile-worker';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { billingFixtures } from '../subscription/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);
const b = billingFixtures(t);

const EVENTS = `query ($type: EventType, $objectId: UUID, $createdAfter: DateTime) {
  events(first: 100, type: $type, objectId: $objectId, createdAfter: $createdAfter) {
    edges { node { id type objectType objectId data createdAt } }
  }
}`;

type EventNode = {
  id: string;
  type: string;
  objectType: string;
  objectId: string;
  data: any;
  createdAt: string;
};

async function events(env: TestEnvironment, filter: Record<string, unknown> = {}): Promise<EventNode[]> {
  const data = await f.gql(env, EVENTS, filter);
  return data.events.edges.map((edge: { node: EventNode }) => edge.node);
}

const BOOK = `mutation ($id: UUID!) { invoiceBook(id: $id) { invoice { id handle } userErrors { code } } }`;
const SETTLE = `mutation ($id: UUID!, $input: InvoiceSettleInput!) {
  invoiceSettle(id: $id, input: $input) { invoice { settlementStatus } userErrors { code } } }`;

describe('events', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment('Events');
  });

  it('records a customer’s creation and change with the customer as the API shows it', async () => {
    const id = await f.createCustomer(env, { name: 'Grace Hopper', handle: 'grace' });
    await f.gql(
      env,
      'mutation ($id: UUID!) { customerUpdate(id: $id, input: { name: "Grace B. Hopper" }) { userErrors { code } } }',
      { id },
    );

    const about = await events(env, { objectId: id });
    expect(about.map((event) => event.type)).toEqual(['CUSTOMER_CREATED', 'CUSTOMER_UPDATED']);
    expect(about[0]).toMatchObject({
      objectType: 'customer',
      objectId: id,
      data: { id, name: 'Grace Hopper', handle: 'grace' },
    });
    expect(about[1]?.data).toMatchObject({ name: 'Grace B. Hopper' });
  });

  it('writes no event for a change that does not commit', async () => {
    // given a customer holding a handle
    await f.createCustomer(env, { handle: 'taken' });
    const before = await events(env, { type: 'CUSTOMER_CREATED' });

    // when a second customer with that handle is refused
    const refused = await t.graphql(
      'mutation { customerCreate(input: { name: "Copy", handle: "taken" }) { userErrors { code } } }',
      {},
      { env },
    );
    expect(refused.body.data.customerCreate.userErrors).toEqual([{ code: 'DUPLICATE' }]);

    // then no event tells of it, here or in the table
    expect(await events(env, { type: 'CUSTOMER_CREATED' })).toHaveLength(before.length);
    const rows = await t.sql(
      `select count(*)::int as n from event where environment_id = $1 and data->>'name' = 'Copy'`,
      [env.id],
    );
    expect(rows[0]?.n).toBe(0);
  });

  it('follows an invoice from draft to booked to settled', async () => {
    const customerId = await f.createCustomer(env, { name: 'Buyer' });
    const draft = await f.createInvoice(env, {
      customerId,
      items: [{ title: 'Consulting', quantity: 2, unitAmount: 5000 }],
    });
    const booked = (await f.gql(env, BOOK, { id: draft.id })).invoiceBook;
    expect(booked.userErrors).toEqual([]);
    const settled = (
      await f.gql(env, SETTLE, { id: draft.id, input: { date: '2026-03-10', amount: 10_000 } })
    ).invoiceSettle;
    expect(settled.invoice.settlementStatus).toBe('settled');

    const about = await events(env, { objectId: draft.id });
    expect(about.map((event) => event.type)).toEqual([
      'INVOICE_CREATED',
      'INVOICE_BOOKED',
      'INVOICE_SETTLED',
    ]);
    expect(about[0]?.data).toMatchObject({
      id: draft.id,
      status: 'draft',
      handle: null,
      totalInclVat: 10_000,
    });
    expect(about[1]?.data).toMatchObject({
      status: 'booked',
      handle: booked.invoice.handle,
      totalDue: 10_000,
    });
    expect(about[2]?.data).toMatchObject({ settlementStatus: 'settled', totalDue: 0 });
    expect(about[2]?.data.settlements).toHaveLength(1);
  });

  it('tells of a void', async () => {
    const customerId = await f.createCustomer(env, { name: 'Mistaken' });
    const draft = await f.createInvoice(env, {
      customerId,
      items: [{ title: 'Oops', quantity: 1, unitAmount: 100 }],
    });
    expect((await f.gql(env, BOOK, { id: draft.id })).invoiceBook.userErrors).toEqual([]);
    const voided = await f.gql(
      env,
      'mutation ($id: UUID!) { invoiceVoid(id: $id) { userErrors { code } } }',
      {
        id: draft.id,
      },
    );
    expect(voided.invoiceVoid.userErrors).toEqual([]);
    const [last] = (await events(env, { objectId: draft.id })).slice(-1);
    expect(last).toMatchObject({ type: 'INVOICE_VOIDED', data: { id: draft.id, totalDue: 0 } });
  });

  it('tells once of each invoice that became overdue', async () => {
    const { invoiceOverdueTasks, INVOICE_OVERDUE_TASK } = await import(
      '../../src/modules/invoice/invoice-overdue.jobs.ts'
    );
    const customerId = await f.createCustomer(env, { name: 'Late payer' });
    const booked = async (dueDate: string) => {
      const draft = await f.createInvoice(env, {
        customerId,
        dueDate,
        items: [{ title: 'Work', quantity: 1, unitAmount: 500 }],
      });
      expect((await f.gql(env, BOOK, { id: draft.id })).invoiceBook.userErrors).toEqual([]);
      return draft.id as string;
    };
    const late = await booked('2026-03-15');
    const paid = await booked('2026-03-15');
    await f.gql(env, SETTLE, { id: paid, input: { date: '2026-03-10', amount: 500 } });
    const notYet = await booked('2999-01-01');

    // when the hourly task runs twice
    const task = invoiceOverdueTasks({
      orm: t.orm,
      logger: pino({ level: 'silent' }),
      settings: { eventRetentionDays: 30, mail: null },
      eventListeners: [],
    })[INVOICE_OVERDUE_TASK] as Task;
    await task({}, {} as JobHelpers);
    await task({}, {} as JobHelpers);

    // then only the late invoice told of it, once
    const overdue = async (id: string) =>
      (await events(env, { objectId: id })).filter((event) => event.type === 'INVOICE_OVERDUE');
    expect(await overdue(late)).toHaveLength(1);
    expect((await overdue(late))[0]?.data).toMatchObject({ id: late, dueDate: '2026-03-15', totalDue: 500 });
    expect(await overdue(paid)).toEqual([]);
    expect(await overdue(notYet)).toEqual([]);
  });

  it('filters by type and time, and another environment sees none of them', async () => {
    const all = await events(env);
    expect(all.length).toBeGreaterThan(3);
    const booked = await events(env, { type: 'INVOICE_BOOKED' });
    expect(booked.every((event) => event.type === 'INVOICE_BOOKED')).toBe(true);
    const last = all.at(-1) as EventNode;
    const later = await events(env, { createdAfter: last.createdAt });
    expect(later.map((event) => event.id)).toContain(last.id);
    expect(later.length).toBeLessThan(all.length);

    const other = await t.createEnvironment('Other events');
    expect(await events(other)).toEqual([]);
  });

  it('follows a subscription through its changes and the billing run that bills it', async () => {
    const customerId = await b.createCustomer(env);
    const product = await b.createProduct(env, { handle: 'seat-events' });
    const price = await b.createPrice(env, { pricing: { eur: { amount: 1000 } } });
    const subscription = await b.subscribe(env, {
      customerId,
      term: { start: '2026-01-01' },
      items: [{ productId: product.id, priceId: price.id, quantity: 2 }],
    });
    const itemId = subscription.items[0].id;
    expect(
      (await b.tryUpdate(env, subscription.id, { items: [{ id: itemId, quantity: 3 }] })).userErrors,
    ).toEqual([]);
    const run = await b.runBilling(env, '2026-01-15T00:00:00.000Z');
    expect((await b.tryCancel(env, subscription.id)).userErrors).toEqual([]);

    const about = await events(env, { objectId: subscription.id });
    expect(about.map((event) => event.type)).toEqual([
      'SUBSCRIPTION_CREATED',
      'SUBSCRIPTION_UPDATED',
      'SUBSCRIPTION_CANCELLED',
    ]);
    expect(about[0]?.data).toMatchObject({ id: subscription.id, status: 'active', items: [{ id: itemId }] });
    expect(about[2]?.data).toMatchObject({ status: 'cancelled' });
    const [finished] = await events(env, { objectId: run.id });
    expect(finished).toMatchObject({
      type: 'BILLING_RUN_FINISHED',
      data: { id: run.id, status: 'succeeded' },
    });
  });

  it('purges events past their retention', async () => {
    const { purgeExpiredEvents } = await import('../../src/modules/event/event.service.ts');
    const id = await f.createCustomer(env, { name: 'Old news' });
    await t.sql(`update event set created_at = now() - interval '31 days' where object_id = $1`, [id]);
    expect(await purgeExpiredEvents(t.orm.em.fork(), 30)).toBe(1);
    expect(await events(env, { objectId: id })).toEqual([]);
    expect((await events(env)).length).toBeGreaterThan(0);
  });
});
