import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const ALLOWED = 'https://app.example.com';
const t = setupTestApp({ corsOrigins: [ALLOWED, 'http://localhost:5173'] });

const preflight = (app: App, origin: string) =>
  app.fetch('http://test/graphql', {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, x-environment',
    },
  });

const read = (app: App, env: TestEnvironment, origin: string) =>
  app.fetch('http://test/graphql', {
    method: 'POST',
    headers: { ...env.headers, origin, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __typename }' }),
  });

const corsHeaders = (response: Response) =>
  [...response.headers.keys()].filter((name) => name.startsWith('access-control-'));

describe('CORS', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment();
  });

  it('gives no origin access by default, whatever the page sends', async () => {
    // given the app as configured by default
    const app = createApp({ orm: t.orm, logger: pino({ level: 'silent' }) });

    for (const origin of ['https://evil.example', ALLOWED, 'null']) {
      // when a page of that origin asks, then reads
      const asked = await preflight(app, origin);
      const answered = await read(app, env, origin);

      // then the browser is given nothing that lets the page read the answer
      expect(corsHeaders(asked)).toEqual([]);
      expect(answered.status).toBe(200);
      expect(corsHeaders(answered)).toEqual([]);
    }
  });

  it('gives a listed origin access, without credentials, and says the answer varies by origin', async () => {
    const asked = await preflight(t.app, ALLOWED);
    expect(asked.status).toBe(204);
    expect(asked.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(asked.headers.get('access-control-allow-headers')).toContain('x-environment');
    expect(asked.headers.get('access-control-allow-methods')).toContain('POST');
    expect(asked.headers.get('access-control-allow-credentials')).toBeNull();

    const answered = await read(t.app, env, ALLOWED);
    expect(answered.status).toBe(200);
    expect(answered.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(answered.headers.get('access-control-allow-credentials')).toBeNull();
    expect(answered.headers.get('access-control-expose-headers')).toContain('x-request-id');
    expect(answered.headers.get('vary')).toContain('Origin');
  });

  it('gives an origin off the list no CORS header at all, the null origin of sandboxed frames included', async () => {
    for (const origin of ['https://evil.example', 'https://app.example.com.evil.example', 'null']) {
      const asked = await preflight(t.app, origin);
      const answered = await read(t.app, env, origin);
      expect(corsHeaders(asked)).toEqual([]);
      expect(corsHeaders(answered)).toEqual([]);
      expect(answered.headers.get('vary')).toContain('Origin');
    }
  });

  it('reads CORS_ORIGINS as exact origins, refusing wildcards, paths and null', () => {
    expect(loadConfig({}).CORS_ORIGINS).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: `${ALLOWED}, http://localhost:5173` }).CORS_ORIGINS).toEqual([
      ALLOWED,
      'http://localhost:5173',
    ]);
    for (const bad of ['*', 'null', `${ALLOWED}/`, 'app.example.com', 'https://*.example.com']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow(/CORS_ORIGINS/);
    }
  });
});
