import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Received = { path: string; headers: IncomingHttpHeaders; body: string; answered: number };

/**
 * A real HTTP server receiving webhooks on 127.0.0.1: it records every request, and answers it (200
 * unless told otherwise) after `delayMs`. `failFirst(path, n)` makes the first n requests to `path` answer 500.
 */
export function webhookReceiver({ delayMs = 0 }: { delayMs?: number } = {}) {
  const received: Received[] = [];
  const failures = new Map<string, number>();
  const hanging = new Set<string>();
  const bodies = new Map<string, string>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const left = failures.get(path) ?? 0;
      const status = left > 0 ? 500 : 200;
      if (left > 0) failures.set(path, left - 1);
      received.push({
        path,
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
        answered: status,
      });
      if (hanging.has(path)) return;
      setTimeout(() => {
        response.writeHead(status, { 'content-type': 'text/plain' });
        response.end(bodies.get(path) ?? (status === 200 ? 'ok' : 'try again later'));
      }, delayMs);
    });
  });
  return {
    received,
    at: (path: string) => received.filter((request) => request.path === path),
    failFirst: (path: string, count: number) => failures.set(path, count),
    hang: (path: string) => hanging.add(path),
    answerWith: (path: string, body: string) => bodies.set(path, body),
    start: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () =>
          resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
        ),
      ),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const until = async (
  check: () => Promise<boolean> | boolean,
  timeoutMs = 20_000,
  what = 'condition',
) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};
