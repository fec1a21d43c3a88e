import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inEnvironment } from '../../src/db/tenant-transaction.ts';
import type { JobRunner } from '../../src/jobs/runner.ts';
import { startWorker } from '../../src/jobs/worker.ts';
import { recordEvent } from '../../src/modules/event/event.service.ts';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { until, webhookReceiver } from './receiver.ts';

// The receiver listens on 127.0.0.1: this app and its worker may reach private targets.
const t = setupTestApp({ allowPrivateWebhookTargets: true });
const f = invoiceFixtures(t);
const logger = pino({ level: 'silent' });

/** Short waits so a test sees a delivery's whole life: retries after 50 ms, 150 ms, 450 ms, …, for 4 s. */
const RETRY_PERIOD_HOURS = 4 / 3600;

const CREATE = `mutation ($input: WebhookEndpointCreateInput!) {
  webhookEndpointCreate(input: $input) {
    webhookEndpoint { id url status eventTypes } secret userErrors { field code message }
  }
}`;
const DELIVERIES = `query ($id: UUID!) {
  webhookEndpoint(id: $id) {
    status disabledReason failingSince
    deliveries(first: 50) { edges { node {
      id eventId eventType status attemptCount resendOf
      attempts { number statusCode durationMs responseBody error }
    } } }
  }
}`;

type Delivery = {
  id: string;
  eventId: string | null;
  eventType: string;
  status: string;
  attemptCount: number;
  resendOf: string | null;
  attempts: {
    number: number;
    statusCode: number | null;
    durationMs: number;
    responseBody: string | null;
    error: string | null;
  }[];
};

describe('webhooks', () => {
  const receiver = webhookReceiver();
  let base: string;
  let worker: JobRunner;
  let env: TestEnvironment;

  const createEndpoint = async (path: string, eventTypes?: string[]) => {
    const data = await f.gql(env, CREATE, { input: { url: `${base}${path}`, eventTypes } });
    expect(data.webhookEndpointCreate.userErrors).toEqual([]);
    return data.webhookEndpointCreate as { webhookEndpoint: { id: string; url: string }; secret: string };
  };
  const endpointState = async (id: string) => (await f.gql(env, DELIVERIES, { id })).webhookEndpoint;
  const deliveries = async (id: string): Promise<Delivery[]> =>
    (await endpointState(id)).deliveries.edges.map((edge: { node: Delivery }) => edge.node);

  beforeAll(async () => {
    base = await receiver.start();
    env = await t.createEnvironment('Hooks');
    worker = await startWorker(
      {
        BILLING_RUN_SCHEDULE: 'off',
        JOB_CONCURRENCY: 4,
        EVENT_RETENTION_DAYS: 30,
        SMTP_URL: undefined,
        MAIL_FROM: 'billing@example.com',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: true,
        WEBHOOK_TIMEOUT_MS: 1000,
        WEBHOOK_RETRY_BASE_MS: 50,
        WEBHOOK_RETRY_HOURS: RETRY_PERIOD_HOURS,
      },
      { orm: t.orm, ownerUrl: t.databaseUrl, logger },
    );
  });

  afterAll(async () => {
    await worker?.stop();
    await receiver.stop();
  });

  it('retries a receiver that fails 4 times, then delivers the event once more, signed', async () => {
    // given an endpoint for customer.created whose receiver fails its first 4 requests
    const { webhookEndpoint, secret } = await createEndpoint('/flaky', ['CUSTOMER_CREATED']);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    receiver.failFirst('/flaky', 4);

    // when a customer is created
    const customerId = await f.createCustomer(env, { name: 'Ada Lovelace' });

    // then the receiver is asked 5 times for the same message, and answers 200 the fifth time
    await until(() => receiver.at('/flaky').some((request) => request.answered === 200), 20_000, 'a 200');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const requests = receiver.at('/flaky');
    expect(requests.map((request) => request.answered)).toEqual([500, 500, 500, 500, 200]);
    const [event] = await t.sql<{ id: string }>(
      `select id from event where object_id = $1 and type = 'customer.created'`,
      [customerId],
    );
    expect(new Set(requests.map((request) => request.headers['webhook-id']))).toEqual(new Set([event?.id]));

    // and every request verifies with the endpoint's secret, carrying the event as the API shows it
    const verifier = new Webhook(secret);
    for (const request of requests) {
      const message = verifier.verify(request.body, request.headers as Record<string, string>) as never;
      expect(message).toMatchObject({
        id: event?.id,
        type: 'customer.created',
        data: { id: customerId, name: 'Ada Lovelace' },
      });
    }
    expect(() =>
      new Webhook(`whsec_${Buffer.from('another secret of 32 bytes......').toString('base64')}`).verify(
        requests[4]?.body ?? '',
        requests[4]?.headers as Record<string, string>,
      ),
    ).toThrow();

    // and the delivery lists each attempt
    const [delivery] = await deliveries(webhookEndpoint.id);
    expect(delivery).toMatchObject({ eventId: event?.id, status: 'succeeded', attemptCount: 5 });
    expect(delivery?.attempts.map((attempt) => [attempt.number, attempt.statusCode])).toEqual([
      [1, 500],
      [2, 500],
      [3, 500],
      [4, 500],
      [5, 200],
    ]);
    expect(delivery?.attempts[0]).toMatchObject({
      responseBody: 'try again later',
      error: 'the endpoint answered 500',
    });
    expect(delivery?.attempts[4]).toMatchObject({ responseBody: 'ok', error: null });
    expect((await endpointState(webhookEndpoint.id)).failingSince).toBeNull();
  });

  it('delivers nothing for a change that rolls back, and only the types an endpoint asked for', async () => {
    // given an endpoint for every type and one for invoice.booked only
    const all = await createEndpoint('/all');
    const booked = await createEndpoint('/booked', ['INVOICE_BOOKED']);

    // when a change rolls back after writing its event, and another commits
    const lost = randomUUID();
    await expect(
      inEnvironment(t.orm.em, env.id, async (em) => {
        recordEvent(em, env.id, {
          type: 'customer.created',
          objectType: 'customer',
          objectId: lost,
          data: {},
        });
        await em.flush();
        throw new Error('the change fails after its event was written');
      }),
    ).rejects.toThrow('the change fails');
    const customerId = await f.createCustomer(env, { name: 'Grace Hopper' });

    // then the committed one reaches the endpoint for every type, and the rolled-back one nobody
    await until(() => receiver.at('/all').length > 0, 15_000, 'a delivery');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(receiver.at('/all').map((request) => JSON.parse(request.body).data.id)).toEqual([customerId]);
    expect(receiver.received.some((request) => request.body.includes(lost))).toBe(false);
    expect(await t.sql('select id from event where object_id = $1', [lost])).toEqual([]);
    expect(
      await t.sql(
        `select d.id from webhook_delivery d where d.endpoint_id = $1 and d.event_type = 'customer.created'`,
        [all.webhookEndpoint.id],
      ),
    ).toHaveLength(1);
    expect(receiver.at('/booked')).toEqual([]);
    expect(await deliveries(booked.webhookEndpoint.id)).toEqual([]);
  });

  it('delivers each event of a burst of concurrent writes exactly once, and leaves no outbox row', async () => {
    // given an endpoint for customer.created
    await createEndpoint('/burst', ['CUSTOMER_CREATED']);

    // when six customers are created at once
    const customerIds = await Promise.all(
      Array.from({ length: 6 }, (_, i) => f.createCustomer(env, { name: `Burst ${i}` })),
    );

    // then each creation reaches the endpoint once, and the relay let every event go
    await until(() => receiver.at('/burst').length >= 6, 15_000, 'six deliveries');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const delivered = receiver.at('/burst').map((request) => JSON.parse(request.body).data.id);
    expect(delivered.sort()).toEqual([...customerIds].sort());
    expect(
      await t.sql(
        `select o.event_id from event_relay.outbox o join event e on e.id = o.event_id
         where e.object_id = any($1::uuid[])`,
        [customerIds],
      ),
    ).toEqual([]);
  });

  it('sends a test message, resends a delivery, and signs with a rotated secret from then on', async () => {
    const { webhookEndpoint, secret } = await createEndpoint('/test', ['INVOICE_VOIDED']);
    const id = webhookEndpoint.id;

    // a test message, signed with the secret, its webhook-id the delivery's id
    const sent = await f.gql(
      env,
      `mutation ($id: UUID!) { webhookEndpointSendTest(id: $id) { webhookDelivery { id eventType } userErrors { code } } }`,
      { id },
    );
    const test = sent.webhookEndpointSendTest.webhookDelivery;
    expect(test.eventType).toBe('webhook.test');
    await until(() => receiver.at('/test').length === 1, 10_000, 'the test message');
    const [first] = receiver.at('/test');
    expect(first?.headers['webhook-id']).toBe(test.id);
    expect(new Webhook(secret).verify(first?.body ?? '', first?.headers as never)).toMatchObject({
      type: 'webhook.test',
    });

    // rotated: the next message verifies with the new secret and not with the old
    const rotated = await f.gql(
      env,
      `mutation ($id: UUID!) { webhookEndpointRotateSecret(id: $id) { secret userErrors { code } } }`,
      { id },
    );
    const newSecret = rotated.webhookEndpointRotateSecret.secret as string;
    expect(newSecret).not.toBe(secret);

    // resent: the same message again, as a new delivery
    const resent = await f.gql(
      env,
      `mutation ($id: UUID!) { webhookDeliveryResend(id: $id) { webhookDelivery { id resendOf } userErrors { code } } }`,
      { id: test.id },
    );
    expect(resent.webhookDeliveryResend.webhookDelivery.resendOf).toBe(test.id);
    await until(() => receiver.at('/test').length === 2, 10_000, 'the resent message');
    const second = receiver.at('/test')[1];
    expect(second?.headers['webhook-id']).toBe(test.id);
    expect(new Webhook(newSecret).verify(second?.body ?? '', second?.headers as never)).toMatchObject({
      type: 'webhook.test',
    });
    expect(() => new Webhook(secret).verify(second?.body ?? '', second?.headers as never)).toThrow();

    // disabled: resending is refused with a coded error
    await f.gql(env, `mutation ($id: UUID!) { webhookEndpointDisable(id: $id) { userErrors { code } } }`, {
      id,
    });
    const refused = await f.gql(
      env,
      `mutation ($id: UUID!) { webhookDeliveryResend(id: $id) { webhookDelivery { id } userErrors { code } } }`,
      { id: test.id },
    );
    expect(refused.webhookDeliveryResend.userErrors).toEqual([{ code: 'CONFLICT' }]);
    const enabled = await f.gql(
      env,
      `mutation ($id: UUID!) { webhookEndpointEnable(id: $id) { webhookEndpoint { status disabledReason } } }`,
      { id },
    );
    expect(enabled.webhookEndpointEnable.webhookEndpoint).toEqual({
      status: 'enabled',
      disabledReason: null,
    });
  });

  it('updates an endpoint and refuses what is not a URL, with coded userErrors', async () => {
    const { webhookEndpoint } = await createEndpoint('/update');
    const updated = await f.gql(
      env,
      `mutation ($id: UUID!, $input: WebhookEndpointUpdateInput!) {
        webhookEndpointUpdate(id: $id, input: $input) {
          webhookEndpoint { url description eventTypes } userErrors { field code }
        }
      }`,
      {
        id: webhookEndpoint.id,
        input: { description: 'Orders', eventTypes: ['INVOICE_BOOKED', 'INVOICE_BOOKED'] },
      },
    );
    expect(updated.webhookEndpointUpdate).toEqual({
      webhookEndpoint: { url: `${base}/update`, description: 'Orders', eventTypes: ['INVOICE_BOOKED'] },
      userErrors: [],
    });
    const bad = await t.graphql(CREATE, { input: { url: 'ftp://example.com/hook' } }, { env });
    expect(bad.body.errors).toEqual([
      expect.objectContaining({
        extensions: {
          code: 'INVALID_INPUT',
          errors: [{ pointer: '/input/url', detail: expect.stringContaining('http') }],
        },
      }),
    ]);
    const missing = await f.gql(
      env,
      `mutation ($id: UUID!) { webhookEndpointDisable(id: $id) { userErrors { code } } }`,
      { id: randomUUID() },
    );
    expect(missing.webhookEndpointDisable.userErrors).toEqual([{ code: 'NOT_FOUND' }]);
  });

  it('gives up on an attempt after the timeout, and caps what it keeps of an answer', async () => {
    receiver.hang('/slow');
    receiver.answerWith('/long', 'x'.repeat(200_000));
    receiver.failFirst('/long', 1);
    const slow = await createEndpoint('/slow', ['CUSTOMER_UPDATED']);
    const long = await createEndpoint('/long', ['CUSTOMER_UPDATED']);
    const customerId = await f.createCustomer(env, { name: 'Slow' });
    expect(
      (await t.rest('PATCH', `/customers/${customerId}`, { env, body: { name: 'Slower' } })).status,
    ).toBe(200);

    await until(
      async () => (await deliveries(slow.webhookEndpoint.id))[0]?.attempts.length === 1,
      10_000,
      'an attempt',
    );
    const [attempt] = (await deliveries(slow.webhookEndpoint.id))[0]?.attempts ?? [];
    expect(attempt?.error).toBe('no answer within 1000 ms');
    expect(attempt?.statusCode).toBeNull();
    expect(attempt?.durationMs).toBeGreaterThanOrEqual(950);

    await until(
      async () => (await deliveries(long.webhookEndpoint.id))[0]?.status === 'succeeded',
      10_000,
      'success',
    );
    const [failed] = (await deliveries(long.webhookEndpoint.id))[0]?.attempts ?? [];
    expect(failed?.statusCode).toBe(500);
    expect(failed?.responseBody).toHaveLength(1024);
  });

  it('disables an endpoint that failed every attempt for the retry period, and says so in an event', async () => {
    // given an endpoint whose receiver always fails, and one that hears of disabled endpoints
    receiver.failFirst('/down', 1_000);
    const down = await createEndpoint('/down', ['SUBSCRIPTION_CANCELLED', 'CUSTOMER_CREATED']);
    await createEndpoint('/watcher', ['WEBHOOK_ENDPOINT_DISABLED']);

    // when an event for it happens and every attempt fails for the period (4 s here)
    await f.createCustomer(env, { name: 'Nobody home' });

    // then its delivery fails, the endpoint is disabled, and the event says so
    await until(
      async () => (await endpointState(down.webhookEndpoint.id)).status === 'disabled',
      20_000,
      'disabled',
    );
    const state = await endpointState(down.webhookEndpoint.id);
    expect(state.disabledReason).toBe('failing');
    const [delivery] = await deliveries(down.webhookEndpoint.id);
    expect(delivery?.status).toBe('failed');
    // and it was retried until the period was over: its last attempt ended at the period's end or after it
    // (less the moment between an attempt's end and the decision to give up). How many attempts fit in the
    // period depends on when the job worker, which polls for due retries every 2 s, picks each one up: the
    // first retry comes 0.05 s after the first attempt, or up to 2 s later when it waits for a poll.
    const attempts = await t.sql<{ endedAfterMs: number }>(
      `select extract(epoch from a.started_at - d.created_at)::float8 * 1000 + a.duration_ms as "endedAfterMs"
       from webhook_delivery_attempt a join webhook_delivery d on d.id = a.delivery_id
       where d.endpoint_id = $1 order by a.number`,
      [down.webhookEndpoint.id],
    );
    expect(delivery?.attemptCount).toBe(attempts.length);
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.at(-1)?.endedAfterMs).toBeGreaterThanOrEqual(RETRY_PERIOD_HOURS * 3600 * 1000 - 100);
    const events = await f.gql(
      env,
      `query ($id: UUID!) { events(type: WEBHOOK_ENDPOINT_DISABLED, objectId: $id) { edges { node { objectId data } } } }`,
      { id: down.webhookEndpoint.id },
    );
    expect(events.events.edges).toEqual([
      {
        node: {
          objectId: down.webhookEndpoint.id,
          data: expect.objectContaining({
            status: 'disabled',
            disabledReason: 'failing',
            url: `${base}/down`,
          }),
        },
      },
    ]);
    expect(JSON.stringify(events)).not.toContain('whsec_');
    const heard = () =>
      receiver
        .at('/watcher')
        .map((request) => JSON.parse(request.body))
        .filter((message) => message.data.id === down.webhookEndpoint.id);
    await until(() => heard().length > 0, 10_000, 'the watcher hears of it');
    expect(heard()).toEqual([expect.objectContaining({ type: 'webhook_endpoint.disabled' })]);
    // and nothing more goes to it
    const asked = receiver.at('/down').length;
    await f.createCustomer(env, { name: 'Still nobody' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(receiver.at('/down')).toHaveLength(asked);
  });
});
