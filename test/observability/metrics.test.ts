import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { billingRunsTotal } from '../../src/metrics.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();

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
    const response = await t.rest('GET', '/metrics');
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

  it('labels GraphQL requests with their operation name', async () => {
    await t.graphql('query CustomerList { customers { edges { cursor } } }', {}, { env });
    await t.graphql('{ customers { edges { cursor } } }', {}, { env });
    await t.graphql('{ customers { edges { cursor } } }', {}, { headers: { 'x-environment': env.id } });

    const text = await scrape();
    expect(sample(text, 'http_requests_total', { route: 'graphql:CustomerList', status: '200' })).toBe(1);
    expect(sample(text, 'http_requests_total', { route: 'graphql:anonymous', status: '200' })).toBe(1);
    expect(sample(text, 'http_requests_total', { route: 'graphql', status: '401' })).toBe(1);
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

  it('requires the metrics token when one is configured', async () => {
    const app = createApp({
      orm: t.orm,
      logger: pino({ level: 'silent' }),
      metricsToken: 'scrape-secret-0123456789',
    });
    const denied = await app.fetch('http://test/metrics', {
      headers: { authorization: `Bearer ${env.token}` },
    });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const allowed = await app.fetch('http://test/metrics', {
      headers: { authorization: 'Bearer scrape-secret-0123456789' },
    });
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain('http_requests_total');
  });
});
