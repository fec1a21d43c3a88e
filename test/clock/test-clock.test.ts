import type { JobHelpers, Task } from 'graphile-worker';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { clockTasks } from '../../src/modules/clock/clock.jobs.ts';
import { CLOCK_ADVANCE_TASK, type ClockAdvancePayload } from '../../src/modules/clock/clock.service.ts';
import { billingFixtures } from '../subscription/fixtures.ts';
import { gql } from '../support/catalog.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = billingFixtures(t);

const CLOCK_FIELDS = 'id name frozenTime status advancingTo';
const ERRORS = 'userErrors { field message code }';

const createClock = async (env: TestEnvironment, frozenTime: string, name = 'Clock') =>
  (
    await t.graphql(
      `mutation ($input: TestClockCreateInput!) { testClockCreate(input: $input) { testClock { ${CLOCK_FIELDS} } ${ERRORS} } }`,
      { input: { name, frozenTime } },
      { env },
    )
  ).body.data.testClockCreate;

const advance = async (env: TestEnvironment, id: string, to: string) =>
  (
    await t.graphql(
      `mutation ($id: UUID!, $to: DateTime!) { testClockAdvance(id: $id, to: $to) { testClock { ${CLOCK_FIELDS} } ${ERRORS} } }`,
      { id, to },
      { env },
    )
  ).body.data.testClockAdvance;

const clockOf = async (env: TestEnvironment, id: string) =>
  (await gql(t, env, `query ($id: UUID!) { testClock(id: $id) { ${CLOCK_FIELDS} } }`, { id })).testClock;

/** The advance jobs the queue holds for `clockId` (a worker would run them). */
const queuedAdvances = (clockId: string) =>
  t.sql<{ payload: ClockAdvancePayload }>(
    `select j.payload from graphile_worker._private_jobs j
     join graphile_worker._private_tasks task on task.id = j.task_id
     where task.identifier = $1 and j.payload->>'clockId' = $2`,
    [CLOCK_ADVANCE_TASK, clockId],
  );

const advanceTask = (): Task =>
  clockTasks({
    orm: t.orm,
    logger: pino({ level: 'silent' }),
    settings: { eventRetentionDays: 30, mail: null },
    eventListeners: [],
  })[CLOCK_ADVANCE_TASK] as Task;

/** Runs the queued advance of `clockId` as the worker would, and removes it from the queue. */
async function runQueuedAdvance(clockId: string): Promise<void> {
  const [job] = await queuedAdvances(clockId);
  expect(job, 'an advance job is queued').toBeDefined();
  await advanceTask()(job?.payload as ClockAdvancePayload, {} as JobHelpers);
  await t.sql(
    `delete from graphile_worker._private_jobs j using graphile_worker._private_tasks task
     where task.id = j.task_id and task.identifier = $1 and j.payload->>'clockId' = $2`,
    [CLOCK_ADVANCE_TASK, clockId],
  );
}

/** Advances and runs the advance's job; the clock must then be ready at `to`. */
async function advanceFully(env: TestEnvironment, id: string, to: string): Promise<void> {
  const payload = await advance(env, id, to);
  expect(payload.userErrors).toEqual([]);
  expect(payload.testClock).toMatchObject({ status: 'advancing', advancingTo: to });
  await runQueuedAdvance(id);
  expect(await clockOf(env, id)).toMatchObject({ status: 'ready', frozenTime: to, advancingTo: null });
}

const billed = async (customerId: string) =>
  (
    await t.sql<{ periods: number; invoices: number }>(
      `select (select count(*) from billed_period b
                join subscription_item i on i.environment_id = b.environment_id and i.id = b.subscription_item_id
                join subscription s on s.environment_id = i.environment_id and s.id = i.subscription_id
                where s.customer_id = $1)::int as periods,
              (select count(*) from invoice where customer_id = $1)::int as invoices`,
      [customerId],
    )
  )[0];

/** A test environment with a monthly €10 price, and a customer subscribed to it since `start` (on `clockId`, if given). */
async function subscribedCustomer(
  env: TestEnvironment,
  price: { product: string; price: string },
  clockId?: string,
) {
  const customerId = await f.createCustomer(env, {
    paymentTerm: 'net14',
    ...(clockId ? { testClockId: clockId } : {}),
  });
  const subscription = await f.subscribe(env, {
    customerId,
    term: { start: '2026-01-01' },
    items: [{ productId: price.product, priceId: price.price }],
  });
  return { customerId, subscriptionId: subscription.id as string };
}

describe('test clocks', () => {
  let env: TestEnvironment;
  let catalog: { product: string; price: string };

  beforeAll(async () => {
    env = await t.createEnvironment('Clocks', { kind: 'test' });
    const product = await f.createProduct(env, { handle: 'seats' });
    const price = await f.createPrice(env, { pricing: { eur: { amount: 1000 } } });
    catalog = { product: product.id, price: price.id };
  });

  it('bill a customer on the clock through several advances, and no other customer of the environment', async () => {
    // given a clock at New Year, a customer on it and one on real time, both subscribed monthly since then
    const created = await createClock(env, '2026-01-01T09:00:00.000Z', 'Q1');
    expect(created.userErrors).toEqual([]);
    const clock = created.testClock;
    expect(clock).toMatchObject({ name: 'Q1', status: 'ready', frozenTime: '2026-01-01T09:00:00.000Z' });
    const onClock = await subscribedCustomer(env, catalog, clock.id);
    const onRealTime = await subscribedCustomer(env, catalog);

    // when the clock advances three times
    await advanceFully(env, clock.id, '2026-01-15T09:00:00.000Z');
    expect(await billed(onClock.customerId)).toEqual({ periods: 1, invoices: 1 });
    await advanceFully(env, clock.id, '2026-02-20T09:00:00.000Z');
    await advanceFully(env, clock.id, '2026-03-05T09:00:00.000Z');

    // then the clock's customer has its three months billed, on invoices dated on the clock, and the other nothing
    expect(await billed(onClock.customerId)).toEqual({ periods: 3, invoices: 3 });
    expect(await billed(onRealTime.customerId)).toEqual({ periods: 0, invoices: 0 });
    const invoices = await f.invoicesOf(env, onClock.customerId);
    expect(invoices.map((invoice: { date: string }) => invoice.date)).toEqual([
      '2026-01-15',
      '2026-02-20',
      '2026-03-05',
    ]);
    expect(
      invoices.map((invoice: { items: { periodStart: string }[] }) => invoice.items[0]?.periodStart),
    ).toEqual(['2026-01-01', '2026-02-01', '2026-03-01']);
    const runs = await t.sql<{ triggered_by: string; test_clock_id: string; as_of: Date }>(
      'select triggered_by, test_clock_id, as_of from billing_run where environment_id = $1 order by id',
      [env.id],
    );
    expect(runs.map((run) => [run.triggered_by, run.test_clock_id, run.as_of.toISOString()])).toEqual([
      ['test_clock', clock.id, '2026-01-15T09:00:00.000Z'],
      ['test_clock', clock.id, '2026-02-20T09:00:00.000Z'],
      ['test_clock', clock.id, '2026-03-05T09:00:00.000Z'],
    ]);
    const events = await gql(
      t,
      env,
      `query ($id: UUID!) { events(first: 20, objectId: $id) { edges { node { type data } } } }`,
      { id: clock.id },
    );
    expect(events.events.edges.map((edge: { node: { type: string } }) => edge.node.type)).toEqual([
      'TEST_CLOCK_CREATED',
      'TEST_CLOCK_ADVANCING',
      'TEST_CLOCK_READY',
      'TEST_CLOCK_ADVANCING',
      'TEST_CLOCK_READY',
      'TEST_CLOCK_ADVANCING',
      'TEST_CLOCK_READY',
    ]);
    expect(events.events.edges.at(-1).node.data).toMatchObject({
      frozenTime: '2026-03-05T09:00:00.000Z',
      status: 'ready',
      invoiceCount: 1,
    });

    // and its invoices are overdue on the clock's days: the first (due 29 January) since 20 February,
    // the last (due 19 March) not yet, although real time is long past it
    const overdue = await gql(
      t,
      env,
      `query ($customerId: UUID!) { invoices(first: 5, filter: { customerId: $customerId }) { edges { node { id dueDate overdue daysOverdue } } } }`,
      { customerId: onClock.customerId },
    );
    const nodes = overdue.invoices.edges.map(
      (edge: { node: { id: string; dueDate: string; daysOverdue: number } }) => edge.node,
    );
    expect(
      nodes.map((node: { dueDate: string; daysOverdue: number }) => [node.dueDate, node.daysOverdue]),
    ).toEqual([
      ['2026-01-29', 35],
      ['2026-03-06', 0],
      ['2026-03-19', 0],
    ]);
    const told = await t.sql<{ object_id: string }>(
      `select object_id from event where environment_id = $1 and type = 'invoice.overdue'`,
      [env.id],
    );
    expect(told.map((row) => row.object_id)).toEqual([nodes[0].id]);

    // and a billing run of the environment bills the customer on real time only
    const run = await f.runBilling(env, '2026-03-05T09:00:00.000Z');
    expect(run).toMatchObject({ periodCount: 3, invoiceCount: 1 });
    expect(await billed(onClock.customerId)).toEqual({ periods: 3, invoices: 3 });
    expect(await billed(onRealTime.customerId)).toEqual({ periods: 3, invoices: 1 });

    // and "now" for the clock's customer is the clock's time: a cancellation without a date, and the preview
    const cancelled = await f.tryCancel(env, onClock.subscriptionId, undefined, { proration: 'none' });
    expect(cancelled.userErrors).toEqual([]);
    expect(cancelled.subscription.cancelledAt).toBe('2026-03-05T09:00:00.000Z');
  });

  it('refuse to move backwards, too far ahead, or while advancing', async () => {
    const { testClock: clock } = await createClock(env, '2026-06-10T00:00:00.000Z');
    const { customerId } = await subscribedCustomer(env, catalog, clock.id);

    // a preview without asOf previews at the clock's time: January to June, not up to today's month
    const preview = await gql(
      t,
      env,
      'query ($customerId: UUID!) { invoicePreview(customerId: $customerId) { date items { periodStart } } }',
      { customerId },
    );
    expect(preview.invoicePreview).toHaveLength(1);
    expect(preview.invoicePreview[0].date).toBe('2026-06-10');
    expect(preview.invoicePreview[0].items.map((item: { periodStart: string }) => item.periodStart)).toEqual([
      '2026-01-01',
      '2026-02-01',
      '2026-03-01',
      '2026-04-01',
      '2026-05-01',
      '2026-06-01',
    ]);

    const backwards = await advance(env, clock.id, '2026-06-09T23:59:59.000Z');
    expect(backwards).toEqual({
      testClock: null,
      userErrors: [
        {
          field: ['input', 'to'],
          code: 'TEST_CLOCK_BACKWARDS',
          message: "is before the clock's frozen time 2026-06-10T00:00:00.000Z: a clock only moves forward",
        },
      ],
    });
    // two monthly periods: up to 10 August, not a second later
    const tooFar = await advance(env, clock.id, '2026-08-10T00:00:01.000Z');
    expect(tooFar.userErrors).toEqual([
      expect.objectContaining({ code: 'TEST_CLOCK_TOO_FAR', field: ['input', 'to'] }),
    ]);
    expect(tooFar.userErrors[0].message).toMatch(/^is later than 2026-08-10T00:00:00.000Z/);

    expect((await advance(env, clock.id, '2026-08-10T00:00:00.000Z')).userErrors).toEqual([]);
    const again = await advance(env, clock.id, '2026-08-11T00:00:00.000Z');
    expect(again.userErrors).toEqual([
      expect.objectContaining({ field: null, code: 'TEST_CLOCK_ADVANCING' }),
    ]);
    await runQueuedAdvance(clock.id);
    expect(await clockOf(env, clock.id)).toMatchObject({
      status: 'ready',
      frozenTime: '2026-08-10T00:00:00.000Z',
    });

    // nothing was written by the refusals
    const events = await t.sql<{ type: string }>('select type from event where object_id = $1 order by id', [
      clock.id,
    ]);
    expect(events.map((event) => event.type)).toEqual([
      'test_clock.created',
      'test_clock.advancing',
      'test_clock.ready',
    ]);
  });

  it('bill exactly once when one advance is asked for twice at once and its job runs twice at once', async () => {
    const { testClock: clock } = await createClock(env, '2026-01-01T00:00:00.000Z');
    const { customerId } = await subscribedCustomer(env, catalog, clock.id);

    const payloads = await Promise.all([
      advance(env, clock.id, '2026-02-15T00:00:00.000Z'),
      advance(env, clock.id, '2026-02-15T00:00:00.000Z'),
    ]);
    const codes = payloads.map((payload) => payload.userErrors[0]?.code ?? 'ok').sort();
    expect(codes).toEqual(['TEST_CLOCK_ADVANCING', 'ok']);

    const [job] = await queuedAdvances(clock.id);
    const task = advanceTask();
    const outcomes = await Promise.allSettled([
      task(job?.payload as ClockAdvancePayload, {} as JobHelpers),
      task(job?.payload as ClockAdvancePayload, {} as JobHelpers),
    ]);
    // one may find the environment's billing lock taken and fail, for the queue to retry it
    if (outcomes.some((outcome) => outcome.status === 'rejected')) await runQueuedAdvance(clock.id);

    expect(await billed(customerId)).toEqual({ periods: 2, invoices: 1 });
    expect(await clockOf(env, clock.id)).toMatchObject({
      status: 'ready',
      frozenTime: '2026-02-15T00:00:00.000Z',
    });
    const ready = await t.sql('select 1 from event where object_id = $1 and type = $2', [
      clock.id,
      'test_clock.ready',
    ]);
    expect(ready).toHaveLength(1);
  });

  it('take customers at creation only, in their own environment, and are deleted only without customers', async () => {
    const { testClock: clock } = await createClock(env, '2026-01-01T00:00:00.000Z');
    const other = await t.createEnvironment('Other test', { kind: 'test' });
    const { testClock: foreign } = await createClock(other, '2026-01-01T00:00:00.000Z');

    const refused = await t.graphql(
      `mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } ${ERRORS} } }`,
      { input: { name: 'Elsewhere', testClockId: foreign.id } },
      { env },
    );
    expect(refused.body.data.customerCreate.userErrors).toEqual([
      {
        field: ['input', 'testClockId'],
        code: 'INVALID_REFERENCE',
        message: 'is not a test clock of this environment',
      },
    ]);
    expect(await gql(t, env, `query ($id: UUID!) { testClock(id: $id) { id } }`, { id: foreign.id })).toEqual(
      {
        testClock: null,
      },
    );

    const customerId = await f.createCustomer(env, { testClockId: clock.id });
    const customer = await gql(t, env, `query ($id: UUID!) { customer(id: $id) { testClockId } }`, {
      id: customerId,
    });
    expect(customer.customer.testClockId).toBe(clock.id);
    const detach = await t.graphql(
      `mutation ($id: UUID!) { customerUpdate(id: $id, input: { testClockId: null }) { ${ERRORS} } }`,
      { id: customerId },
      { env },
    );
    expect(detach.body.errors?.[0]?.message).toMatch(/testClockId/);

    const DELETE = `mutation ($id: UUID!) { testClockDelete(id: $id) { deletedTestClockId ${ERRORS} } }`;
    const kept = await t.graphql(DELETE, { id: clock.id }, { env });
    expect(kept.body.data.testClockDelete).toMatchObject({
      deletedTestClockId: null,
      userErrors: [{ code: 'CONFLICT' }],
    });
    const deleted = await t.graphql(DELETE, { id: foreign.id }, { env: other });
    expect(deleted.body.data.testClockDelete).toEqual({ deletedTestClockId: foreign.id, userErrors: [] });
  });
});

describe('a live environment', () => {
  it('has no test clocks, and its customers none', async () => {
    const live = await t.createEnvironment('Live');

    const created = await createClock(live, '2026-01-01T00:00:00.000Z');
    expect(created).toEqual({
      testClock: null,
      userErrors: [
        {
          field: null,
          code: 'TEST_CLOCK_LIVE_ENVIRONMENT',
          message: 'test clocks belong to test environments; this environment is live and runs on real time',
        },
      ],
    });
    const customer = await t.graphql(
      `mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } ${ERRORS} } }`,
      { input: { name: 'Live', testClockId: '00000000-0000-7000-8000-000000000000' } },
      { env: live },
    );
    expect(customer.body.data.customerCreate.userErrors).toEqual([
      expect.objectContaining({ code: 'TEST_CLOCK_LIVE_ENVIRONMENT' }),
    ]);
    expect(await t.sql('select 1 from test_clock where environment_id = $1', [live.id])).toEqual([]);
  });
});
