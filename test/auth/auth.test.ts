import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { AccessService } from '../../src/auth/access.service.ts';
import { expectProblem, setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();

describe('authentication and environment access', () => {
  let env: TestEnvironment;
  let other: TestEnvironment;
  const faces = [
    ['REST', (headers: Record<string, string>) => t.rest('GET', `/customers/${randomUUID()}`, { headers })],
    [
      'GraphQL',
      (headers: Record<string, string>) => t.graphql('{ customers { edges { cursor } } }', {}, { headers }),
    ],
  ] as const;

  beforeAll(async () => {
    env = await t.createEnvironment('Main');
    other = await t.createEnvironment('Other');
  });

  describe.each(faces)('%s', (_face, call) => {
    it('answers 400 when x-environment is missing', async () => {
      const response = await call({ authorization: env.headers.authorization as string });
      expectProblem(response, 400);
      expect(response.body.detail).toContain('x-environment');
    });

    it('answers 400 when x-environment is not a UUID', async () => {
      const response = await call({ ...env.headers, 'x-environment': 'production' });
      expectProblem(response, 400);
      expect(response.body.detail).toContain('UUID');
    });

    it('answers 401 with WWW-Authenticate when the token is missing', async () => {
      const response = await call({ 'x-environment': env.id });
      expectProblem(response, 401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    });

    it('answers 401 for an unknown token', async () => {
      const response = await call({ 'x-environment': env.id, authorization: 'Bearer bg_not-a-real-token' });
      expectProblem(response, 401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    });

    it('answers 403 for a valid token not granted the environment', async () => {
      const response = await call({ ...env.headers, 'x-environment': other.id });
      expectProblem(response, 403);
    });

    it('answers 403 for an environment that does not exist', async () => {
      const response = await call({ ...env.headers, 'x-environment': randomUUID() });
      expectProblem(response, 403);
    });
  });

  it('refuses a revoked token with 401 on both faces', async () => {
    // given a token that worked
    const access = new AccessService(t.adminOrm.em.fork());
    const { token, secret } = await access.createToken([env.id], 'soon revoked');
    const headers = { authorization: `Bearer ${secret}`, 'x-environment': env.id };
    expect((await t.graphql('{ customers { edges { cursor } } }', {}, { headers })).status).toBe(200);

    // when it is revoked
    await access.revokeToken(token.id);

    // then
    expectProblem(await t.graphql('{ customers { edges { cursor } } }', {}, { headers }), 401);
    expectProblem(await t.rest('GET', `/customers/${randomUUID()}`, { headers }), 401);
  });

  it('stores only a hash of the secret and records when a token was last used', async () => {
    expect((await t.graphql('{ customers { edges { cursor } } }', {}, { env })).status).toBe(200);

    const [row] = await t.sql<{ secret_hash: string; prefix: string; last_used_at: Date | null }>(
      'select secret_hash, prefix, last_used_at from api_token where $1 = any(environment_ids) order by id limit 1',
      [env.id],
    );
    expect(row?.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row?.secret_hash).not.toContain(env.token.slice(3));
    expect(env.token.startsWith(row?.prefix as string)).toBe(true);
    expect(row?.last_used_at).toBeInstanceOf(Date);
  });

  it('lets a token granted two environments act in both', async () => {
    const access = new AccessService(t.adminOrm.em.fork());
    const { secret } = await access.createToken([env.id, other.id]);
    for (const id of [env.id, other.id]) {
      const response = await t.graphql(
        '{ customers { edges { cursor } } }',
        {},
        { headers: { authorization: `Bearer ${secret}`, 'x-environment': id } },
      );
      expect(response.status).toBe(200);
    }
  });

  it('serves /health and /ready without credentials', async () => {
    expect((await t.rest('GET', '/health')).status).toBe(200);
    expect((await t.rest('GET', '/ready')).status).toBe(200);
  });
});
