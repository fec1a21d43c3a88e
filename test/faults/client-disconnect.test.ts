import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApp } from '../../src/app.ts';
import { createLogger } from '../../src/logger.ts';
import { httpRequestsTotal } from '../../src/metrics.ts';
import type { Route } from '../../src/rest/router.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { type Served, serve } from '../support/serve.ts';

/** Answers only once its client has gone: a request whose answer can never be delivered. */
const outlivedRoute: Route = {
  method: 'POST',
  path: '/test/outlived',
  summary: 'Answer after the client has left (tests only)',
  response: { status: 200, description: 'Never delivered', schema: z.object({}) },
  handler: async ({ request }) => {
    if (!request.signal.aborted) await once(request.signal, 'abort');
    return { status: 200, body: {} };
  },
};

const t = setupTestApp();

const CREATE_CUSTOMER = `mutation ($input: CustomerCreateInput!) {
  customerCreate(input: $input) { customer { id } userErrors { code } }
}`;

/**
 * The app on a real socket (app.fetch has no connection to lose), logging into `written`. Each request
 * is sent by hand on a raw socket, which the client destroys while the server is still reading the
 * body it declared, or while the server works on a request it has read whole.
 */
describe('a client that disconnects in the middle of its request', () => {
  let env: TestEnvironment;
  let customerId: string;
  let served: Served;
  let written: string[];
  const lines = () => written.map((line) => JSON.parse(line));

  beforeAll(async () => {
    env = await t.createEnvironment();
    const app = createApp({
      orm: t.orm,
      logger: createLogger('debug', false, { write: (line) => written.push(line) }),
      extraRoutes: [outlivedRoute],
    });
    served = await serve(app);
    const created = await t.graphql(CREATE_CUSTOMER, { input: { name: 'Ada', currency: 'EUR' } }, { env });
    customerId = created.body.data.customerCreate.customer.id;
  });

  afterAll(async () => {
    await served?.close();
  });

  beforeEach(() => {
    written = [];
  });

  /**
   * Sends the request head declaring `body`'s length and the first `sent` bytes of it (half, unless
   * told), waits until the server has taken the request in, then destroys the socket.
   */
  async function abandon(
    path: string,
    headers: Record<string, string>,
    body: string,
    sent = Math.floor(body.length / 2),
  ) {
    const arrived = once(served.server, 'request');
    const socket = connect(served.port, '127.0.0.1');
    await once(socket, 'connect');
    const head = [
      `POST ${path} HTTP/1.1`,
      'host: 127.0.0.1',
      'content-type: application/json',
      `content-length: ${Buffer.byteLength(body)}`,
      ...Object.entries({ ...env.headers, ...headers }).map(([name, value]) => `${name}: ${value}`),
    ].join('\r\n');
    socket.write(`${head}\r\n\r\n${body.slice(0, sent)}`);
    await arrived;
    socket.destroy();
  }

  /** The line the server logs when it is done with the request `requestId`. */
  async function finalLine(requestId: string) {
    for (let waited = 0; waited < 10_000; waited += 20) {
      const line = lines().find((candidate) => candidate.requestId === requestId && 'status' in candidate);
      if (line) return line;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no line for ${requestId}; logged:\n${written.join('')}`);
  }

  const counted = async (route: string, status: string) =>
    (await httpRequestsTotal.get()).values
      .filter((sample) => sample.labels.route === route && sample.labels.status === status)
      .reduce((sum, sample) => sum + sample.value, 0);

  const count = async (table: string) =>
    (
      await t.sql<{ n: number }>(`select count(*)::int as n from ${table} where environment_id = $1`, [
        env.id,
      ])
    )[0]?.n ?? 0;

  const stored = async () => ({
    customers: await count('customer'),
    invoices: await count('invoice'),
    idempotencyKeys: await count('idempotency_key'),
    auditEvents: await count('audit_event'),
  });

  /** The request is recorded as closed by its client: a 499 at info level, no error logged, no 503. */
  async function expectClosedByClient(requestId: string, route: string) {
    expect(await finalLine(requestId)).toMatchObject({
      level: 30,
      msg: 'client closed the request',
      route,
      status: 499,
    });
    expect(lines().filter((line) => line.level >= 50)).toEqual([]);
    expect(await counted(route, '499')).toBe(1);
    expect(await counted(route, '503')).toBe(0);
  }

  it('REST: a POST cut off mid-body is a client closed request (499, info), not a 503, and writes nothing', async () => {
    // given a valid invoice creation, and what is stored before it
    const body = JSON.stringify({ customerId, currency: null, date: '2026-03-01', items: null });
    const before = await stored();

    // when the client sends half of it and then closes the connection
    await abandon('/invoices', { 'x-request-id': 'cut-rest', 'idempotency-key': 'cut-rest' }, body);

    // then the request is recorded as closed by the client, at info level, and nothing logs an error
    await expectClosedByClient('cut-rest', '/invoices');
    // and nothing was written, not even the Idempotency-Key
    expect(await stored()).toEqual(before);

    // when the client retries the whole request with the same key, it is created once
    const retried = await fetch(`${served.baseUrl}/invoices`, {
      method: 'POST',
      headers: { ...env.headers, 'content-type': 'application/json', 'idempotency-key': 'cut-rest' },
      body,
    });
    expect(retried.status, await retried.clone().text()).toBe(201);
    expect(await count('invoice')).toBe(before.invoices + 1);
  });

  it('GraphQL: a POST cut off mid-body is a client closed request (499, info), not a 503, and writes nothing', async () => {
    // given a valid customer creation
    const body = JSON.stringify({
      query: CREATE_CUSTOMER,
      variables: { input: { name: 'Cut off' } },
    });
    const before = await stored();

    // when the client sends half of it and then closes the connection
    await abandon('/graphql', { 'x-request-id': 'cut-graphql', 'idempotency-key': 'cut-graphql' }, body);

    // then the request is recorded as closed by the client, at info level, and nothing logs an error
    await expectClosedByClient('cut-graphql', 'graphql');
    // and nothing was written, not even the Idempotency-Key
    expect(await stored()).toEqual(before);

    // when the client retries the whole request with the same key, it runs
    const retried = await fetch(`${served.baseUrl}/graphql`, {
      method: 'POST',
      headers: { ...env.headers, 'content-type': 'application/json', 'idempotency-key': 'cut-graphql' },
      body,
    });
    expect((await retried.json()).data.customerCreate.userErrors).toEqual([]);
    expect(await count('customer')).toBe(before.customers + 1);
  });

  it('a request whose client left before the answer is recorded as closed by the client', async () => {
    // when the client sends a whole request and leaves while the server works on it
    await abandon('/test/outlived', { 'x-request-id': 'left-early' }, '{}', 2);

    // then the answer the server could not deliver is not counted as delivered, and is no error
    await expectClosedByClient('left-early', '/test/outlived');
    expect(await counted('/test/outlived', '200')).toBe(0);
  });
});
