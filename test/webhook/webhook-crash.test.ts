import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { type ServerProcess, startServer, stopServer } from '../support/server-process.ts';
import { until, webhookReceiver } from './receiver.ts';

/**
 * Real server processes (`node src/main.ts`, its job worker inside) delivering a backlog of events to a
 * slow receiver: the first is SIGKILLed while deliveries are in flight, a second takes over, and every
 * event must arrive (at least once: a request answered but not yet recorded is sent again).
 */
const t = setupTestApp({ allowPrivateWebhookTargets: true });
const f = invoiceFixtures(t);

const EVENTS = 60;
const KILL_AFTER_REQUESTS = 12;

const serverEnv = () => ({
  DATABASE_URL: t.databaseUrl,
  RATE_LIMIT_REQUESTS: '0',
  JOB_CONCURRENCY: '4',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RETRY_BASE_MS: '200',
});

describe('killing the server while it delivers webhooks', () => {
  const receiver = webhookReceiver({ delayMs: 100 });
  let base: string;
  let env: TestEnvironment;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    base = await receiver.start();
    env = await t.createEnvironment('Crash hooks');
  });

  afterAll(async () => {
    for (const server of servers) {
      const running = server.process.exitCode === null && server.process.signalCode === null;
      if (running) await stopServer(server);
    }
    await receiver.stop();
  });

  it('delivers every event after a restart, none lost', { timeout: 120_000 }, async () => {
    // given an endpoint for customer.created and a backlog of events, written while no worker runs
    const created = await f.gql(
      env,
      `mutation ($input: WebhookEndpointCreateInput!) {
        webhookEndpointCreate(input: $input) { webhookEndpoint { id } secret userErrors { code } }
      }`,
      { input: { url: `${base}/crash`, eventTypes: ['CUSTOMER_CREATED'] } },
    );
    const { secret } = created.webhookEndpointCreate;
    for (let i = 0; i < EVENTS; i++) await f.createCustomer(env, { name: `Crash ${i}` });
    const events = await t.sql<{ id: string }>(
      `select id from event where environment_id = $1 and type = 'customer.created'`,
      [env.id],
    );
    expect(events).toHaveLength(EVENTS);

    // when a server starts delivering them and is SIGKILLed with deliveries in flight
    const first = await startServer(serverEnv());
    servers.push(first);
    await until(() => receiver.at('/crash').length >= KILL_AFTER_REQUESTS, 30_000, 'deliveries under way');
    expect(await stopServer(first, 'SIGKILL')).toBeNull();
    expect(first.process.signalCode).toBe('SIGKILL');
    const beforeRestart = new Set(receiver.at('/crash').map((request) => request.headers['webhook-id']));
    expect(beforeRestart.size).toBeLessThan(EVENTS);

    // and another server starts
    const second = await startServer(serverEnv());
    servers.push(second);

    // then every event arrives, each verifying with the endpoint's secret
    const delivered = () => new Set(receiver.at('/crash').map((request) => request.headers['webhook-id']));
    await until(() => delivered().size === EVENTS, 60_000, 'every event delivered');
    expect([...delivered()].sort()).toEqual(events.map((event) => event.id).sort());
    const verifier = new Webhook(secret);
    for (const request of receiver.at('/crash')) {
      expect(() => verifier.verify(request.body, request.headers as Record<string, string>)).not.toThrow();
    }
    await until(
      async () =>
        (
          await t.sql(`select id from webhook_delivery where environment_id = $1 and status <> 'succeeded'`, [
            env.id,
          ])
        ).length === 0,
      30_000,
      'every delivery recorded as succeeded',
    );
    expect(await t.sql('select id from webhook_delivery where environment_id = $1', [env.id])).toHaveLength(
      EVENTS,
    );
    // the request in flight at the kill was never recorded: the sweep found it and queued it again
    expect(second.output()).toContain('queued abandoned webhook work again');
    expect(second.output()).not.toMatch(/uncaught|unhandled/i);
  });
});
