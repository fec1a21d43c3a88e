import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobRunner } from '../../src/jobs/runner.ts';
import { startWorker } from '../../src/jobs/worker.ts';
import { sendWebhook } from '../../src/modules/webhook/webhook.sender.ts';
import { newSecret } from '../../src/modules/webhook/webhook.service.ts';
import { isPrivateAddress } from '../../src/modules/webhook/webhook.targets.ts';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { until, webhookReceiver } from './receiver.ts';

// WEBHOOK_ALLOW_PRIVATE_TARGETS off, as by default.
const t = setupTestApp();
const f = invoiceFixtures(t);
const logger = pino({ level: 'silent' });

const CREATE = `mutation ($input: WebhookEndpointCreateInput!) {
  webhookEndpointCreate(input: $input) { webhookEndpoint { id } secret userErrors { field code message } }
}`;

describe('webhook targets (SSRF)', () => {
  const receiver = webhookReceiver();
  let base: string;
  let env: TestEnvironment;
  let worker: JobRunner;

  beforeAll(async () => {
    base = await receiver.start();
    env = await t.createEnvironment('Guarded');
    worker = await startWorker(
      {
        BILLING_RUN_SCHEDULE: 'off',
        JOB_CONCURRENCY: 2,
        EVENT_RETENTION_DAYS: 30,
        SMTP_URL: undefined,
        MAIL_FROM: 'billing@example.com',
        WEBHOOK_TIMEOUT_MS: 1000,
        WEBHOOK_RETRY_BASE_MS: 60_000,
      },
      { orm: t.orm, ownerUrl: t.databaseUrl, logger },
    );
  });

  afterAll(async () => {
    await worker?.stop();
    await receiver.stop();
  });

  it('tells loopback, private, link-local and mapped addresses from public ones', () => {
    const refused = [
      '127.0.0.1',
      '127.255.0.9',
      '10.0.0.5',
      '172.16.3.4',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fe80::1%eth0',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::ffff:a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
      '2002:7f00:1::',
      '::127.0.0.1',
    ];
    const allowed = [
      '8.8.8.8',
      '1.1.1.1',
      '172.32.0.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '2a00:1450::1',
    ];
    expect(refused.filter((address) => !isPrivateAddress(address))).toEqual([]);
    expect(allowed.filter((address) => isPrivateAddress(address))).toEqual([]);
  });

  it('refuses endpoints whose URL reaches a non-public address, on create and on update', async () => {
    const targets = [
      'http://127.0.0.1/hook',
      'http://10.1.2.3/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]:8080/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://[fe80::1]/hook',
      'http://localhost:3000/hook',
      'http://0x7f.1/hook',
      'http://2130706433/hook',
      `${base}/hook`,
    ];
    for (const url of targets) {
      const data = await f.gql(env, CREATE, { input: { url } });
      expect(data.webhookEndpointCreate, url).toMatchObject({
        webhookEndpoint: null,
        secret: null,
        userErrors: [
          { field: ['input', 'url'], code: 'INVALID_INPUT', message: expect.stringContaining('public') },
        ],
      });
    }
    expect(await t.sql('select id from webhook_endpoint')).toEqual([]);

    // a host that does not resolve now is taken (it is checked again at each delivery), then not moved inside
    const created = await f.gql(env, CREATE, { input: { url: 'https://hooks.example.invalid/billing' } });
    expect(created.webhookEndpointCreate.userErrors).toEqual([]);
    const moved = await f.gql(
      env,
      `mutation ($id: UUID!, $input: WebhookEndpointUpdateInput!) {
        webhookEndpointUpdate(id: $id, input: $input) { webhookEndpoint { url } userErrors { field code } }
      }`,
      { id: created.webhookEndpointCreate.webhookEndpoint.id, input: { url: 'http://192.168.0.10/hook' } },
    );
    expect(moved.webhookEndpointUpdate).toEqual({
      webhookEndpoint: null,
      userErrors: [{ field: ['input', 'url'], code: 'INVALID_INPUT' }],
    });
  });

  it('resolves the host again at delivery and refuses a private address it now resolves to', async () => {
    // an attempt to a host resolving to loopback, and to a loopback literal: nothing reaches the receiver
    const message = { secret: newSecret(), messageId: randomUUID(), body: '{}' };
    const port = new URL(base).port;
    const byName = await sendWebhook(
      { ...message, url: `http://localhost:${port}/direct` },
      { timeoutMs: 1000, policy: { allowPrivateTargets: false } },
    );
    expect(byName).toMatchObject({
      ok: false,
      statusCode: null,
      error: expect.stringMatching(/localhost resolves to .* not a public address/),
    });
    const literal = await sendWebhook(
      { ...message, url: `http://[::ffff:127.0.0.1]:${port}/direct` },
      { timeoutMs: 1000, policy: { allowPrivateTargets: false } },
    );
    expect(literal).toMatchObject({ ok: false, error: expect.stringContaining('not a public address') });
    expect(receiver.at('/direct')).toEqual([]);
    // allowed, the same request arrives
    const allowed = await sendWebhook(
      { ...message, url: `http://localhost:${port}/direct` },
      { timeoutMs: 1000, policy: { allowPrivateTargets: true } },
    );
    expect(allowed).toMatchObject({ ok: true, statusCode: 200 });
    expect(receiver.at('/direct')).toHaveLength(1);

    // an endpoint whose name came to resolve to loopback after it was saved (stored directly here):
    // its delivery is attempted and refused, and the receiver hears nothing
    const endpointId = randomUUID();
    await t.sql(
      `insert into webhook_endpoint (id, environment_id, url, secret, created_at, updated_at)
       values ($1, $2, $3, $4, now() - interval '1 minute', now())`,
      [endpointId, env.id, `http://localhost:${port}/rebound`, newSecret()],
    );
    await f.createCustomer(env, { name: 'Rebinding' });
    await until(
      async () =>
        (
          await t.sql(
            'select a.id from webhook_delivery_attempt a join webhook_delivery d on d.id = a.delivery_id where d.endpoint_id = $1',
            [endpointId],
          )
        ).length > 0,
      15_000,
      'an attempt',
    );
    const [attempt] = await t.sql<{ status_code: number | null; error: string }>(
      `select a.status_code, a.error from webhook_delivery_attempt a join webhook_delivery d on d.id = a.delivery_id
       where d.endpoint_id = $1`,
      [endpointId],
    );
    expect(attempt).toEqual({ status_code: null, error: expect.stringContaining('not a public address') });
    expect(receiver.at('/rebound')).toEqual([]);
  });
});
