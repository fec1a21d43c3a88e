import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { type App, type AppOptions, createApp } from '../../src/app.ts';
import { AccessService } from '../../src/auth/access.service.ts';
import type { TokenScope } from '../../src/auth/api-token.entity.ts';
import type { EnvironmentKind } from '../../src/auth/environment.entity.ts';
import { dropDatabase, ensureDatabase, withDatabase } from '../../src/db/admin.ts';
import { type Orm, openOrm } from '../../src/db/orm.ts';
import { entities } from '../../src/modules/registry.ts';
import { ContractChecker } from './contract.ts';

export type TestEnvironment = { id: string; token: string; headers: Record<string, string> };

export type TestResponse<T = any> = { status: number; headers: Headers; body: T };

type RequestOptions = {
  env?: TestEnvironment;
  headers?: Record<string, string>;
  /** A JSON value to send; use `rawBody` for text or bytes that are not JSON. */
  body?: unknown;
  rawBody?: string | Uint8Array<ArrayBuffer>;
};

export type TestApp = {
  app: App;
  /** The app's ORM: it acts as the application role, like the server's. */
  orm: Orm;
  /** The database owner's ORM, as the CLI has it: for creating environments and tokens. */
  adminOrm: Orm;
  databaseUrl: string;
  /** A new environment (live unless asked for as test) and a token granted to it (write unless asked for read). */
  createEnvironment: (
    name?: string,
    options?: { kind?: EnvironmentKind; scope?: TokenScope; timezone?: string },
  ) => Promise<TestEnvironment>;
  rest: (method: string, path: string, options?: RequestOptions) => Promise<TestResponse>;
  graphql: (
    query: string,
    variables?: Record<string, unknown>,
    options?: Omit<RequestOptions, 'body'>,
  ) => Promise<TestResponse>;
  /** Runs SQL ($1 placeholders) on its own connection to this file's database, to check what was stored. */
  sql: <R = Record<string, unknown>>(query: string, params?: unknown[]) => Promise<R[]>;
};

async function decode(response: Response): Promise<TestResponse> {
  const type = response.headers.get('content-type') ?? '';
  if (type.startsWith('application/pdf')) {
    return {
      status: response.status,
      headers: response.headers,
      body: new Uint8Array(await response.arrayBuffer()),
    };
  }
  const text = await response.text();
  const body = text && type.includes('json') ? JSON.parse(text) : text;
  return { status: response.status, headers: response.headers, body };
}

/**
 * Gives a test file its own database, cloned from the migrated template, and the app over it.
 * Requests go through `app.fetch`: no socket, the same code path as the HTTP server. `options` are
 * passed on to createApp (a rate limit, extra routes).
 */
export function setupTestApp(options: Omit<AppOptions, 'orm' | 'logger'> = {}): TestApp {
  const name = `test_${randomBytes(8).toString('hex')}`;
  const adminUrl = inject('adminUrl');
  const databaseUrl = withDatabase(adminUrl, name);
  const harness = { databaseUrl } as TestApp;

  beforeAll(async () => {
    await ensureDatabase(adminUrl, name, inject('templateDatabase'));
    harness.orm = await openOrm(databaseUrl, { entities, poolMax: 8 });
    harness.adminOrm = await openOrm(databaseUrl, { entities, poolMax: 2, owner: true });
    harness.app = createApp({ ...options, orm: harness.orm, logger: pino({ level: 'silent' }) });
  });

  afterAll(async () => {
    await harness.orm?.close();
    await harness.adminOrm?.close();
    await dropDatabase(adminUrl, name);
  });

  harness.createEnvironment = async (environmentName = 'Test', { kind, scope, timezone } = {}) => {
    const access = new AccessService(harness.adminOrm.em.fork());
    const environment = await access.createEnvironment(environmentName, kind, undefined, timezone);
    const { secret } = await access.createToken([environment.id], `${environmentName} token`, scope);
    return {
      id: environment.id,
      token: secret,
      headers: { authorization: `Bearer ${secret}`, 'x-environment': environment.id },
    };
  };

  let contract: ContractChecker | undefined;

  /** Every REST response is checked against the published OpenAPI document: a mismatch fails the test. */
  harness.rest = async (method, path, options = {}) => {
    const hasBody = options.body !== undefined || options.rawBody !== undefined;
    const response = await harness.app.fetch(`http://test${path}`, {
      method,
      headers: {
        ...(hasBody ? { 'content-type': 'application/json' } : {}),
        ...options.env?.headers,
        ...options.headers,
      },
      body: options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
    });
    const decoded = await decode(response);
    contract ??= new ContractChecker();
    contract.check(method, path, decoded);
    return decoded;
  };

  harness.graphql = (query, variables, options = {}) =>
    harness.rest('POST', '/graphql', { ...options, body: { query, variables } });

  harness.sql = async (query, params = []) => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return (await client.query(query, params)).rows;
    } finally {
      await client.end();
    }
  };

  return harness;
}

/** Asserts an RFC 9457 problem response whose body `status` equals the HTTP status. */
export function expectProblem(response: TestResponse, status: number): void {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(response.body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
}
