import { randomUUID } from 'node:crypto';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/app.ts';
import { createLogger } from '../../src/logger.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();

describe('request logs', () => {
  let env: TestEnvironment;
  let app: App;
  let written: string[];
  const lines = () => written.map((line) => JSON.parse(line));
  const completed = () => lines().filter((line) => line.msg === 'request completed');

  beforeAll(async () => {
    env = await t.createEnvironment();
    app = createApp({
      orm: t.orm,
      logger: createLogger('info', false, { write: (line) => written.push(line) }),
    });
  });

  beforeEach(() => {
    written = [];
  });

  it('writes one JSON line per request with id, environment, method, route, status and duration', async () => {
    // when
    const customerId = randomUUID();
    const response = await app.fetch(`http://test/customers/${customerId}`, {
      headers: { ...env.headers, 'x-request-id': 'checkout-42.a' },
    });

    // then
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toBe('checkout-42.a');
    expect(completed()).toEqual([
      expect.objectContaining({
        level: 30,
        requestId: 'checkout-42.a',
        environmentId: env.id,
        method: 'GET',
        route: '/customers/{customerId}',
        path: `/customers/${customerId}`,
        status: 404,
        durationMs: expect.any(Number),
      }),
    ]);
  });

  it('replaces an unusable x-request-id with a generated one and echoes that', async () => {
    for (const given of ['has spaces', 'x'.repeat(129), '']) {
      written = [];
      const response = await app.fetch('http://test/health', { headers: { 'x-request-id': given } });
      const id = response.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(written.join('')).not.toContain('has spaces');
    }
  });

  it('names GraphQL requests by operation type and root field', async () => {
    await app.fetch('http://test/graphql', {
      method: 'POST',
      headers: { ...env.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'query Everyone { customers { edges { cursor } } }' }),
    });
    expect(completed()).toEqual([expect.objectContaining({ route: 'graphql:query:customers', status: 200 })]);
  });

  it('never writes the token or a body, even from a GraphiQL link that carries the token', async () => {
    // given a request whose headers, query string and body hold things that must stay out of logs
    const headers = JSON.stringify(env.headers);
    await app.fetch(`http://test/graphql?headers=${encodeURIComponent(headers)}`, {
      headers: { accept: 'text/html' },
    });
    await app.fetch('http://test/graphql', {
      method: 'POST',
      headers: { ...env.headers, 'content-type': 'application/json' },
      body: JSON.stringify({
        query:
          'mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } } }',
        variables: { input: { name: 'Body Only Name 7731' } },
      }),
    });
    await app.fetch(`http://test/customers/${randomUUID()}`, {
      method: 'PATCH',
      headers: { ...env.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Body Only Name 7731' }),
    });

    // then
    expect(completed().map((line) => line.route)).toEqual([
      'graphiql',
      'graphql:mutation:customerCreate',
      '/customers/{customerId}',
    ]);
    const text = written.join('');
    expect(text).not.toContain(env.token);
    expect(text).not.toContain(env.token.slice(3, 15));
    expect(text.toLowerCase()).not.toContain('authorization');
    expect(text).not.toContain('Body Only Name 7731');
  });

  it("logs a client's mistakes at info, without a stack, on both faces", async () => {
    // when requests fail by the client's doing: an unknown path, malformed JSON, an unknown id, and a
    // mutation whose input breaks the rules
    const json = { ...env.headers, 'content-type': 'application/json' };
    const statuses = [
      (await app.fetch('http://test/nowhere', { headers: env.headers })).status,
      (
        await app.fetch(`http://test/customers/${randomUUID()}`, {
          method: 'PATCH',
          headers: json,
          body: '{',
        })
      ).status,
      (await app.fetch(`http://test/customers/${randomUUID()}`, { headers: env.headers })).status,
      (
        await app.fetch('http://test/graphql', {
          method: 'POST',
          headers: json,
          body: JSON.stringify({
            query: 'mutation { customerCreate(input: { name: "", currency: "XYZ" }) { customer { id } } }',
          }),
        })
      ).status,
    ];

    // then every line is at info, none carries a stack, and the refusal names its code and fields only
    expect(statuses).toEqual([404, 400, 404, 200]);
    expect(lines().map((line) => line.level)).toEqual(lines().map(() => 30));
    expect(written.join('')).not.toContain('stack');
    expect(lines()).toContainEqual(
      expect.objectContaining({
        msg: 'request refused',
        code: 'INVALID_INPUT',
        fields: expect.arrayContaining(['/input/name', '/input/currency']),
      }),
    );
    expect(written.join('')).not.toContain('XYZ');
  });

  it('tags every line logged while serving a request with its request id', async () => {
    // given an app logging at debug level, where GraphQL processing writes lines of its own
    const debugLines: string[] = [];
    const debugApp = createApp({
      orm: t.orm,
      logger: createLogger('debug', false, { write: (line) => debugLines.push(line) }),
    });

    // when
    await debugApp.fetch('http://test/graphql', {
      method: 'POST',
      headers: { ...env.headers, 'content-type': 'application/json', 'x-request-id': 'trace-me' },
      body: JSON.stringify({ query: '{ customers { edges { cursor } } }' }),
    });

    // then
    const parsed = debugLines.map((line) => JSON.parse(line));
    expect(parsed.length).toBeGreaterThan(1);
    expect(parsed.map((line) => line.requestId)).toEqual(parsed.map(() => 'trace-me'));
  });
});
