import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { FREE_QUERY_COST } from '../../src/limits/cost-budget.ts';
import { CostGate } from '../../src/limits/cost-gate.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

/** Priced far above what passes the gate freely (the environment's few invoices make a small answer). */
const HEAVY = '{ invoices(first: 20) { edges { node { id items { id title } } } } }';

const t = setupTestApp();

async function until(condition: () => boolean, what: string) {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > 5000) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * The app behind a real node:http server whose responses' final write (`end`) is held until the test
 * lets it go: the answer has been handed to the connection but not written yet.
 */
async function serve(timeoutMs: number) {
  const gate = new CostGate(FREE_QUERY_COST + 1);
  const app = createApp({
    orm: t.orm,
    logger: pino({ level: 'silent' }),
    executionLimits: { timeoutMs, maxResponseBytes: 10 * 1024 * 1024 },
    maxCostInFlight: gate,
  });
  const held: Array<() => void> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      held.push(() => end(...args));
      return res;
    }) as ServerResponse['end'];
    app(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { gate, server, held, port: (server.address() as AddressInfo).port };
}

describe('the cost gate under a node:http server', () => {
  let env: TestEnvironment;
  let server: Server | undefined;

  beforeAll(async () => {
    env = await t.createEnvironment('GateWritten');
  });

  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  /** Sends HEAVY; resolves to the status and body once the whole answer has arrived. */
  const send = (port: number, signal?: AbortSignal) =>
    new Promise<{ status: number; body: { data?: unknown; errors?: unknown } }>((resolve, reject) => {
      const body = JSON.stringify({ query: HEAVY });
      const req = httpRequest(
        {
          port,
          path: '/graphql',
          method: 'POST',
          headers: { 'content-type': 'application/json', ...env.headers },
          signal,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  it('keeps an operation’s admission until its answer has been written', async () => {
    const s = await serve(5000);
    server = s.server;
    const first = send(s.port);
    // The execution has ended and the answer is handed to the connection, not written yet.
    await until(() => s.held.length === 1, 'the first answer is being written');
    expect(s.gate.costInFlight).toBeGreaterThan(FREE_QUERY_COST);
    const second = send(s.port);
    await until(() => s.gate.waiting === 1, 'the second query waits');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(s.held.length).toBe(1);

    // Writing the first answer lets the second in.
    s.held[0]?.();
    const answer = await first;
    expect([answer.status, answer.body.errors]).toEqual([200, undefined]);
    expect(answer.body.data).toEqual({ invoices: { edges: [] } });
    await until(() => s.held.length === 2, 'the second answer is being written');
    expect(s.gate.waiting).toBe(0);
    expect(s.gate.costInFlight).toBeGreaterThan(FREE_QUERY_COST);
    s.held[1]?.();
    expect((await second).status).toBe(200);
    await until(() => s.gate.costInFlight === 0, 'the second admission is given back');
  });

  it('gives the admission back when the client goes away before its answer is written', async () => {
    const s = await serve(5000);
    server = s.server;
    const client = new AbortController();
    const first = send(s.port, client.signal).catch((error: unknown) => error);
    await until(() => s.held.length === 1, 'the answer is being written');
    expect(s.gate.costInFlight).toBeGreaterThan(FREE_QUERY_COST);

    client.abort();
    await first;
    await until(() => s.gate.costInFlight === 0, 'the closed connection gives the admission back');
    // The next one runs at once (its own write let through).
    const next = send(s.port);
    await until(() => s.held.length === 2, 'the next answer is being written');
    s.held[1]?.();
    expect((await next).status).toBe(200);
    await until(() => s.gate.costInFlight === 0, 'the next admission is given back');
  });

  it('gives the admission back at the latest the execution timeout after the answer was ready', async () => {
    const s = await serve(1000);
    server = s.server;
    const first = send(s.port).catch((error: unknown) => error);
    await until(() => s.held.length === 1, 'the answer is being written');
    expect(s.gate.costInFlight).toBeGreaterThan(FREE_QUERY_COST);
    // Never written (a client that does not read): the gate does not wait for it forever.
    await until(() => s.gate.costInFlight === 0, 'the admission is given back without the write');
    s.held[0]?.();
    await first;
  });
});
