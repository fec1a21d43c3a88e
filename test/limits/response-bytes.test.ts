import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const QUERY = '{ customers(first: 100) { edges { node { id name email currency } } } }';

const t = setupTestApp();
const f = invoiceFixtures(t);

type Answer = { status: number; headers: Record<string, unknown>; body: Buffer; written: string[] };

/** The app behind a real node:http server, recording the type of each chunk written to the socket. */
async function serve(maxResponseBytes: number) {
  const app = createApp({
    orm: t.orm,
    logger: pino({ level: 'silent' }),
    executionLimits: { timeoutMs: 10_000, maxResponseBytes },
  });
  const written: string[] = [];
  const server = createServer((req, res: ServerResponse) => {
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      written.push(typeof chunk === 'string' ? 'string' : 'bytes');
      return write(chunk, ...rest);
    }) as ServerResponse['write'];
    app(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, written, port: (server.address() as AddressInfo).port };
}

describe('a large GraphQL answer', () => {
  let env: TestEnvironment;
  const servers: Server[] = [];

  beforeAll(async () => {
    env = await t.createEnvironment('ResponseBytes');
    // Names of two- to four-byte characters: the bytes sent must be their UTF-8, counted as such.
    for (let i = 0; i < 12; i++) await f.createCustomer(env, { name: `Müller & Søn – 東京 😀 ${i}` });
  });

  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  const ask = async (maxResponseBytes: number): Promise<Answer> => {
    const { server, written, port } = await serve(maxResponseBytes);
    servers.push(server);
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          port,
          path: '/graphql',
          method: 'POST',
          headers: { 'content-type': 'application/json', ...env.headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks),
              written,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ query: QUERY }));
    });
  };

  it('is sent as the bytes its size check encoded, byte for byte the answer a small one gets as text', async () => {
    // given the answer of a server whose limit is far above it (sent as the string it was serialised to)
    const plain = await ask(10 * 1024 * 1024);
    expect(plain.written).toEqual(['string']);
    expect(JSON.parse(plain.body.toString()).data.customers.edges).toHaveLength(12);

    // when a server whose limit the same answer comes close to answers it (measured by encoding it)
    const measured = await ask(plain.body.length + 10);

    // then it writes those bytes, and the client receives exactly what the other server sent
    expect(measured.written).toEqual(['bytes']);
    expect(measured.status).toBe(200);
    expect(measured.body.equals(plain.body)).toBe(true);
    for (const header of ['content-type', 'content-length'])
      expect(measured.headers[header]).toBe(plain.headers[header]);
    expect(Number(measured.headers['content-length'])).toBe(plain.body.length);
  });

  it('is still refused, with its size in bytes, one byte over the limit', async () => {
    const plain = await ask(10 * 1024 * 1024);

    const refused = await ask(plain.body.length - 1);

    const [error] = JSON.parse(refused.body.toString()).errors;
    expect(error.extensions).toEqual({
      code: 'RESPONSE_TOO_LARGE',
      bytes: plain.body.length,
      maxBytes: plain.body.length - 1,
    });
  });
});
