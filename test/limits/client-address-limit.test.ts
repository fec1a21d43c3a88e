import { beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const authFailureLimit = { maxRequests: 3, windowSeconds: 3600 };
const t = setupTestApp({ authFailureLimit });

describe('rate limit of failed authentications per client address', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment('Address');
  });

  /** A GraphQL request from `address`, as Node's adapter hands over its socket. */
  const from = (address: string, headers: Record<string, string>) =>
    t.app.fetch(
      'http://test/graphql',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query: '{ __typename }' }),
      },
      { req: { socket: { remoteAddress: address } } },
    );

  it('answers 429 with Retry-After once an address has spent its budget of failures; valid tokens elsewhere pass', async () => {
    // given an address whose requests fail authentication: a bad token, none, a bad environment
    const flooder = '203.0.113.7';
    const failures: Record<string, string>[] = [
      { authorization: 'Bearer not-a-token', 'x-environment': env.id },
      { 'x-environment': env.id },
      { authorization: `Bearer ${env.token}`, 'x-environment': 'not-a-uuid' },
    ];
    for (const headers of failures) expect((await from(flooder, headers)).status).toBeLessThan(429);

    // when it sends more, even with a valid token
    const refused = await from(flooder, { authorization: 'Bearer not-a-token', 'x-environment': env.id });
    const refusedValid = await from(flooder, env.headers);

    // then it is refused with a problem telling when to retry
    for (const response of [refused, refusedValid]) {
      expect(response.status).toBe(429);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      const retryAfter = Number(response.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(authFailureLimit.windowSeconds);
    }
    // and a well-behaved client elsewhere is not affected, however often it calls
    for (let i = 0; i < authFailureLimit.maxRequests + 2; i++) {
      expect((await from('198.51.100.4', env.headers)).status).toBe(200);
    }
  });

  it('does not count requests that authenticate', async () => {
    const client = '192.0.2.10';
    for (let i = 0; i < authFailureLimit.maxRequests + 2; i++) {
      expect((await from(client, env.headers)).status).toBe(200);
    }
    expect((await from(client, { 'x-environment': env.id })).status).toBe(401);
  });
});
