/**
 * The server's resident memory under the hardening issue's adversarial load: GraphQL documents with as many
 * aliases as the limits allow, PDFs of a 1000-line invoice, and hundreds of connections at once, all together.
 * The server runs as `npm start` runs it (the flags of package.json's start script) on a fresh embedded
 * database, with the rate limit and the query cost budget off (an adversary with many tokens is not
 * held by them).
 *
 *   node bench/memory.ts            MEMORY_SECONDS (default 30) of load; prints peak RSS and heap
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freePort } from '../src/db/embedded.ts';
import { GRAPHQL_LIMITS } from '../src/limits/graphql-limits.ts';
import { startEnvironment, startFlags } from './child.ts';
import { residentMemory } from './load.ts';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = Number(process.env.MEMORY_SECONDS ?? 30);
const INVOICE_LINES = 1000;

async function startServer(dataDir: string, flags: string[]) {
  const port = await freePort();
  const child = spawn(process.execPath, [...flags, path.join(ROOT, 'src/main.ts')], {
    env: {
      ...process.env,
      ...(await startEnvironment()),
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      PORT: String(port),
      HOST: '127.0.0.1',
      RATE_LIMIT_REQUESTS: '0',
      QUERY_COST_PER_SECOND: '0',
      BILLING_RUN_SCHEDULE: 'off',
      METRICS_TOKEN,
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let banner = '';
  const listening = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      banner += chunk;
      if (!banner.includes('listening on')) return;
      // Later lines (one per request) are read and dropped, so they cost the server only their writing.
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      resolve();
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${banner}`)));
  });
  await listening;
  const token = /token:\s+(bg_\S+)/.exec(banner)?.[1];
  const environment = /environment:\s+([0-9a-f-]{36})/.exec(banner)?.[1];
  if (!token || !environment) throw new Error(`no first-start token in:\n${banner}`);
  const headers = { authorization: `Bearer ${token}`, 'x-environment': environment };
  return { child, url: `http://127.0.0.1:${port}`, headers };
}

type Server = Awaited<ReturnType<typeof startServer>>;

async function call(server: Server, method: string, pathname: string, body: unknown) {
  const response = await fetch(`${server.url}${pathname}`, {
    method,
    headers: { ...server.headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok || json.errors) throw new Error(`${pathname}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

async function seed(server: Server): Promise<string> {
  let customerId = '';
  for (let i = 0; i < 100; i++) {
    const created = await call(server, 'POST', '/graphql', {
      query: `mutation { customerCreate(input: { name: "Customer ${i}", currency: "EUR" }) { customer { id } } }`,
    });
    customerId = created.data.customerCreate.customer.id;
  }
  const items = Array.from({ length: INVOICE_LINES }, (_, i) => ({
    title: `Line ${i} with a title long enough to wrap in the PDF table`,
    quantity: 3,
    unitAmount: 1234,
  }));
  const invoice = await call(server, 'POST', '/invoices', {
    customerId,
    currency: 'EUR',
    date: '2026-03-01',
    items,
  });
  return invoice.id;
}

/** As many aliases as the document limits allow, each a page of customers. */
const aliasQuery = () => {
  const fields = Array.from(
    { length: GRAPHQL_LIMITS.maxAliases },
    (_, i) => `a${i}: customers(first: 20) { edges { node { id name email currency } } }`,
  );
  return JSON.stringify({ query: `{ ${fields.join(' ')} }` });
};

function load(url: string, connections: number, request: autocannon.Request) {
  return new Promise<autocannon.Result>((resolve, reject) =>
    autocannon({ url, connections, duration: SECONDS, timeout: 120, requests: [request] }, (error, result) =>
      error ? reject(error) : resolve(result),
    ),
  );
}

/** /metrics is served only to this run's own token. */
const METRICS_TOKEN = randomBytes(24).toString('base64url');

async function heapUsed(url: string): Promise<number> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  if (!response.ok) throw new Error(`/metrics answered ${response.status}`);
  const text = await response.text();
  return Number(/^nodejs_heap_size_used_bytes (\S+)/m.exec(text)?.[1] ?? 0) / 2 ** 20;
}

async function stop(child: ChildProcess) {
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

const dataDir = await mkdtemp(path.join(tmpdir(), 'billing-memory-'));
// The embedded PostgreSQL runs as its own user when this runs as root: it must reach the directory.
await chmod(dataDir, 0o755);
const flags = await startFlags();
const server = await startServer(dataDir, flags);
try {
  const invoiceId = await seed(server);
  const pid = server.child.pid as number;
  const idle = await residentMemory(pid);
  const peak = { rss: idle, heap: 0 };
  const sampler = setInterval(async () => {
    peak.rss = Math.max(peak.rss, await residentMemory(pid));
    peak.heap = Math.max(peak.heap, await heapUsed(server.url).catch(() => 0));
  }, 500);
  const json = { ...server.headers, 'content-type': 'application/json' };
  const results = await Promise.all([
    load(`${server.url}/graphql`, 50, { method: 'POST', headers: json, body: aliasQuery() }),
    load(`${server.url}/invoices/${invoiceId}`, 10, {
      method: 'GET',
      headers: { ...server.headers, accept: 'application/pdf' },
    }),
    load(`${server.url}/invoices/${invoiceId}`, 400, { method: 'GET', headers: server.headers }),
  ]);
  clearInterval(sampler);
  const names = [
    'aliases (50 connections)',
    `${INVOICE_LINES}-line PDFs (10)`,
    'many connections (400), the invoice as JSON',
  ];
  console.log(`server: node ${flags.join(' ')} src/main.ts; ${SECONDS} s of load, all three at once`);
  results.forEach((result, i) => {
    const statuses = Object.entries(result.statusCodeStats ?? {}).map(
      ([code, { count }]) => `${code}: ${count}`,
    );
    console.log(
      `  ${names[i]}: ${result.requests.total} requests (${statuses.join(', ')}), errors ${result.errors}`,
    );
  });
  console.log(
    `RSS idle ${idle.toFixed(0)} MB, peak ${peak.rss.toFixed(0)} MB; heap used peak ${peak.heap.toFixed(0)} MB`,
  );
} finally {
  await stop(server.child);
  await rm(dataDir, { recursive: true, force: true });
}
