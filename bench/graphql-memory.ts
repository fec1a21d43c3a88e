/**
 * In-process memory of the heaviest GraphQL document the limits admit (the bench's memory scenario:
 * 3 aliases × invoices(first: 18) over invoices of 1,000 lines), through `app.fetch` as the server runs
 * it. Sends it `requests` times, `concurrency` at a time, sampling the heap every few milliseconds, and
 * prints the heap above the idle level at its highest, and the process's RSS. For comparing a change to
 * what one execution holds, before and after, without a server and a load generator. Run with
 * --expose-gc (the idle level is taken after a full collection).
 *
 *   node --expose-gc bench/graphql-memory.ts [requests=6] [concurrency=1]
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { createApp } from '../src/app.ts';
import { TokenCache } from '../src/auth/token-cache.ts';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate, openOrm } from '../src/db/orm.ts';
import { entities } from '../src/modules/registry.ts';
import { heaviestPageScenario } from './scenarios.ts';
import { seedHeavy } from './seed.ts';

const requests = Number(process.argv[2] ?? 6);
const concurrency = Number(process.argv[3] ?? 1);
const aliases = Number(process.env.ALIASES ?? 3);
const pageSize = Number(process.env.PAGE_SIZE ?? 18);
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'billing-gqlmem-'));
await chmod(dataDir, 0o755);
const database = await startEmbeddedDatabase(dataDir);
try {
  const owner = await openOrm(database.url, { entities, poolMax: 4, owner: true });
  await migrate(owner);
  const heavy = await seedHeavy(owner, database.url, pageSize);
  await owner.close();
  const orm = await openOrm(database.url, { entities, poolMax: 10 });
  const tokenCache = new TokenCache(database.url, 60_000);
  await tokenCache.start();
  const app = createApp({ orm, logger: pino({ level: 'silent' }), tokenCache });
  const scenario = heaviestPageScenario(heavy, aliases, pageSize);
  let bytes = 0;
  const send = async () => {
    const request = scenario.request(0);
    const response = await app.fetch(`http://bench${request.path}`, {
      method: request.method,
      headers: { ...request.headers },
      body: request.body,
    });
    const body = await response.arrayBuffer();
    bytes = body.byteLength;
    if (response.status !== 200)
      throw new Error(`${response.status}: ${Buffer.from(body).toString().slice(0, 300)}`);
  };
  await send(); // compiles the document, warms the code
  gc();
  const idle = process.memoryUsage();
  const peak = { heap: 0, external: 0, rss: 0 };
  const sample = () => {
    const m = process.memoryUsage();
    peak.heap = Math.max(peak.heap, m.heapUsed);
    peak.external = Math.max(peak.external, m.external);
    peak.rss = Math.max(peak.rss, m.rss);
  };
  const sampler = setInterval(sample, 2);
  const cpu = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < requests) await send();
    }),
  );
  const used = process.cpuUsage(cpu);
  clearInterval(sampler);
  sample();
  console.log(
    `${scenario.name}: answer ${mib(bytes)} MiB; ${requests} requests, ${concurrency} at a time; ` +
      `heap used idle ${mib(idle.heapUsed)} MiB, peak +${mib(peak.heap - idle.heapUsed)} MiB; ` +
      `external peak +${mib(peak.external - idle.external)} MiB; RSS idle ${mib(idle.rss)} peak ${mib(peak.rss)} MiB; ` +
      `${((used.user + used.system) / 1000 / requests).toFixed(0)} ms CPU/request (this process), ` +
      `${((performance.now() - started) / requests).toFixed(0)} ms wall/request; load ${os.loadavg()[0]?.toFixed(1)}`,
  );
  await tokenCache.close();
  await orm.close();
} finally {
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
