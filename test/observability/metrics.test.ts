import { randomBytes, randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { Gauge } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { createLogger } from '../../src/logger.ts';
import { billingRunsTotal, metricsRegistry } from '../../src/metrics.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const METRICS_TOKEN = 'scrape-secret-0123456789';
const t = setupTestApp({ metricsToken: METRICS_TOKEN });
const scraper = { authorization: `Bearer ${METRICS_TOKEN}` };

/** The value of one sample line, e.g. `http_requests_total{method="GET",route="/x",status="200"}`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = /\{(.*)\}/.exec(line)?.[1] ?? '';
    const found = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return undefined;
}

describe('/metrics', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment();
  });

  const scrape = async () => {
    const response = await t.rest('GET', '/metrics', { headers: scraper });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    return response.body as string;
  };

  it('counts REST requests by route template and status, with latency histograms', async () => {
    // given
    const before = sample(await scrape(), 'http_requests_total', { route: '/customers/{customerId}' }) ?? 0;

    // when
    await t.rest('GET', `/customers/${randomUUID()}`, { env });

    // then
    const text = await scrape();
    const labels = { method: 'GET', route: '/customers/{customerId}', status: '404' };
    expect(sample(text, 'http_requests_total', labels)).toBe(before + 1);
    expect(sample(text, 'http_request_duration_seconds_count', labels)).toBe(before + 1);
    expect(sample(text, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(before + 1);
    expect(text).not.toContain(env.id);
  });

  it('labels GraphQL requests with their operation type and root field, never the operation name', async () => {
    // when
    await t.graphql('query CustomerList { customers { edges { cursor } } }', {}, { env });
    await t.graphql('{ ...Root } fragment Root on Query { customers { edges { cursor } } }', {}, { env });
    await t.graphql('{ customers { edges { cursor } } products { edges { cursor } } }', {}, { env });
    await t.graphql(
      'mutation Named { customerCreate(input: { name: "M" }) { customer { id } } }',
      {},
      { env },
    );
    await t.graphql('{ customers { edges { cursor } } }', {}, { headers: { 'x-environment': env.id } });

    // then
    const text = await scrape();
    const count = (route: string, status: string) => sample(text, 'http_requests_total', { route, status });
    expect(count('graphql:query:customers', '200')).toBe(2);
    expect(count('graphql:query:multiple', '200')).toBe(1);
    expect(count('graphql:mutation:customerCreate', '200')).toBe(1);
    expect(count('graphql', '401')).toBe(1);
    expect(text).not.toContain('CustomerList');
    expect(text).not.toContain('Named');
  });

  it('puts root fields the schema does not have and documents that do not parse under graphql:other', async () => {
    // when
    await t.graphql('{ customersX { edges { cursor } } }', {}, { env });
    await t.graphql('mutation { customers { edges { cursor } } }', {}, { env });
    await t.graphql('{ customers { edges { cursor } }', {}, { env });

    // then
    const text = await scrape();
    expect(sample(text, 'http_requests_total', { route: 'graphql:other', status: '200' })).toBe(3);
    expect(text).not.toContain('customersX');
  });

  it('keeps the number of series constant under many huge, distinct operation names and paths', async () => {
    // given one request of each kind, so that every series they fall into exists
    const hugeName = () => `Op${randomBytes(50_000).toString('hex')}`;
    const send = () =>
      Promise.all([
        t.graphql(`query ${hugeName()} { customers { edges { cursor } } }`, {}, { env }),
        t.graphql(`{ ${hugeName()} }`, {}, { env }),
        t.rest('GET', `/${hugeName().slice(0, 2000)}`, { env }),
      ]);
    await send();
    const series = (text: string) => text.split('\n').filter((line) => line.startsWith('http_'));
    const before = series(await scrape());

    // when
    for (let round = 0; round < 10; round++) await send();

    // then
    const after = series(await scrape());
    expect(after.length).toBe(before.length);
    expect(Math.max(...after.map((line) => line.length))).toBeLessThan(200);
  });

  it('puts unknown paths under one label instead of one series per path', async () => {
    await t.rest('GET', `/no/such/${randomUUID()}`);
    expect(
      sample(await scrape(), 'http_requests_total', { route: 'unmatched', status: '404' }),
    ).toBeGreaterThan(0);
  });

  it('reports the database pool', async () => {
    const text = await scrape();
    expect(sample(text, 'db_pool_connections', { state: 'idle' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'db_pool_connections', { state: 'in_use' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'db_pool_waiting_requests')).toBe(0);
    expect(sample(text, 'db_pool_max_connections')).toBe(8);
  });

  it('exports billing_runs_total for the billing runs to count into', async () => {
    expect(sample(await scrape(), 'billing_runs_total', { outcome: 'failed' })).toBe(0);
    billingRunsTotal.labels('succeeded').inc();
    expect(sample(await scrape(), 'billing_runs_total', { outcome: 'succeeded' })).toBe(1);
  });

  it('is not served without a metrics token', async () => {
    // given an app configured with no metrics token
    const app = createApp({ orm: t.orm, logger: pino({ level: 'silent' }) });

    // when
    const response = await app.fetch('http://test/metrics');

    // then
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain('http_requests_total');
  });

  it('answers only its token when one is configured, never an API token', async () => {
    const denied = await t.rest('GET', '/metrics', { env });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const anonymous = await t.rest('GET', '/metrics');
    expect(anonymous.status).toBe(401);
    const allowed = await t.rest('GET', '/metrics', { headers: scraper });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toContain('http_requests_total');
  });

  it('logs a scrape it cannot render at error level', async () => {
    // given a metric whose collection fails, and an app whose log is captured
    const written: string[] = [];
    const app = createApp({
      orm: t.orm,
      logger: createLogger('info', false, { write: (line) => written.push(line) }),
      metricsToken: METRICS_TOKEN,
    });
    new Gauge({
      name: 'test_broken',
      help: 'fails to collect',
      registers: [metricsRegistry],
      collect() {
        throw new Error('collector broke');
      },
    });

    try {
      // when
      const response = await app.fetch('http://test/metrics', { headers: scraper });

      // then
      expect(response.status).toBe(500);
      const logged = written.map((line) => JSON.parse(line));
      expect(logged).toContainEqual(
        expect.objectContaining({
          level: 50,
          msg: 'metrics could not be rendered',
          err: expect.objectContaining({ message: 'collector broke' }),
        }),
      );
    } finally {
      metricsRegistry.removeSingleMetric('test_broken');
    }
  });
});
