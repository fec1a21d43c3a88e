import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { type Served, serve } from '../support/serve.ts';

const ORIGIN = 'https://app.example';
const METRICS_TOKEN = 'front-metrics-token';
const t = setupTestApp({ corsOrigins: [ORIGIN], metricsToken: METRICS_TOKEN });

/**
 * The REST paths are served in front of Yoga's plugin chain (src/app.ts): over a real socket they still
 * get what the plugins gave them (request id, CORS headers, metrics), and what stays with Yoga (fixed
 * paths, preflights) still falls back to the router's 404 / 405.
 */
describe('REST in front of Yoga', () => {
  let served: Served;
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    served = await serve(t.app);
    env = await t.createEnvironment();
    const created = await t.rest('POST', '/customers', { env, body: { name: 'Front door' } });
    customerId = created.body.id;
  });

  afterAll(async () => {
    await served?.close();
  });

  const http = (path: string, init: RequestInit = {}) =>
    fetch(`${served.baseUrl}${path}`, {
      ...init,
      headers: { ...env.headers, ...(init.headers as Record<string, string> | undefined) },
    });

  it('answers a REST read with its row, the request id and the CORS headers, and counts it', async () => {
    const response = await http(`/customers/${customerId}`, {
      headers: { 'x-request-id': 'front-test-1', origin: ORIGIN },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: customerId, name: 'Front door' });
    expect(response.headers.get('x-request-id')).toBe('front-test-1');
    expect(response.headers.get('vary')).toBe('Origin');
    expect(response.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(response.headers.get('access-control-expose-headers')).toContain('x-request-id');
    const rows = await t.sql('select name from customer where id = $1', [customerId]);
    expect(rows).toEqual([{ name: 'Front door' }]);

    const metrics = await fetch(`${served.baseUrl}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(await metrics.text()).toMatch(
      /http_requests_total\{method="GET",route="\/customers\/\{customerId\}",status="200"\} [1-9]/,
    );
  });

  it('gives a request without a sane id a new one, and an unknown origin no CORS header', async () => {
    const response = await http(`/customers/${customerId}`, {
      headers: { 'x-request-id': 'bad id with spaces', origin: 'https://elsewhere.example' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('vary')).toBe('Origin');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers a preflight on a REST path with 204, and any other OPTIONS with 405 and Allow', async () => {
    const preflight = await http(`/customers/${customerId}`, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'PATCH' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('PATCH');
    expect(preflight.headers.get('x-request-id')).toBeTruthy();
    const options = await http(`/customers/${customerId}`, { method: 'OPTIONS' });
    expect(options.status).toBe(405);
    expect(options.headers.get('allow')).toBe('GET, PATCH, HEAD');
    expect(options.headers.get('content-type')).toBe('application/problem+json');
  });

  it('answers a fixed path a method its plugin does not serve with the router 404, through Yoga', async () => {
    for (const [method, path] of [
      ['POST', '/metrics'],
      ['DELETE', '/openapi.json'],
    ] as const) {
      const response = await t.rest(method, path, { env });
      expectProblem(response, 404);
      expect(response.body.instance).toBe(path);
      expect(response.headers.get('x-request-id')).toBeTruthy();
    }
  });

  it('answers a write over the socket with its row and audit event, and HEAD without a body', async () => {
    const patched = await http(`/customers/${customerId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Front door 2' }),
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ id: customerId, name: 'Front door 2' });
    const audit = await t.sql(
      "select operation, token_id is not null as by_token, changed_fields from audit_event where object_id = $1 and action = 'update'",
      [customerId],
    );
    expect(audit).toEqual([
      { operation: 'PATCH /customers/{customerId}', by_token: true, changed_fields: ['name', 'updatedAt'] },
    ]);
    const head = await http(`/customers/${customerId}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await head.text()).toBe('');
  });

  it('negotiates each Accept header the same way every time (remembered per route)', async () => {
    const draft = await t.rest('POST', '/invoices', {
      env,
      body: {
        customerId,
        currency: 'usd',
        date: '2026-03-01',
        items: [{ quantity: 1, unitAmount: 100, title: 'x' }],
      },
    });
    expect(draft.status).toBe(201);
    const path = `/invoices/${draft.body.id}`;
    for (let round = 0; round < 2; round++) {
      const refused = await t.rest('GET', path, { env, headers: { accept: 'text/html' } });
      expectProblem(refused, 406);
      const json = await t.rest('GET', path, {
        env,
        headers: { accept: 'text/html, application/json;q=0.5' },
      });
      expect(json.status).toBe(200);
      expect(json.body).toMatchObject({ id: draft.body.id, status: 'draft', totalExclVat: 100 });
      const xml = await t.rest('GET', path, { env, headers: { accept: 'application/xml' } });
      expectProblem(xml, 409);
    }
  });
});
