/**
 * In-process CPU per GraphQL read (no sockets, no load generator): the invoice page and customer(id),
 * through `app.fetch` with the token cache on, as the server runs them, and PostgreSQL's CPU per request. For comparing a change to the
 * GraphQL read path before and after on a shared machine (CPU time, not req/s).
 *
 *   node bench/graphql-cpu.ts [requests=400] [concurrency=10]
 */
import { chmod, mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { createApp } from '../src/app.ts';
import { TokenCache } from '../src/auth/token-cache.ts';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate, openOrm } from '../src/db/orm.ts';
import { entities } from '../src/modules/registry.ts';
import { postgresCpu } from './proc-cpu.ts';
import { scenarios } from './scenarios.ts';
import { seed } from './seed.ts';
import { StatementRecorder } from './statements.ts';

const requests = Number(process.argv[2] ?? 400);
const concurrency = Number(process.argv[3] ?? 10);
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'billing-gqlcpu-'));
await chmod(dataDir, 0o755);
const database = await startEmbeddedDatabase(dataDir);
try {
  const owner = await openOrm(database.url, { entities, poolMax: 4, owner: true });
  await migrate(owner);
  const data = await seed(owner);
  // As `npm run bench` does before each measurement: the planner then sees the seeded tables' sizes.
  await owner.em.getConnection().execute('vacuum (analyze)');
  await owner.close();
  const orm = await openOrm(database.url, { entities, poolMax: 10 });
  const tokenCache = new TokenCache(database.url, 60_000);
  await tokenCache.start();
  const app = createApp({ orm, logger: pino({ level: 'silent' }), tokenCache });
  const recorder = new StatementRecorder();
  for (const scenario of scenarios(data).filter(
    (s) => s.graphql && s.name.includes(process.env.ONLY ?? ''),
  )) {
    const send = async (n: number) => {
      const request = scenario.request(n);
      const response = await app.fetch(`http://bench${request.path}`, {
        method: request.method,
        headers: { ...request.headers },
        body: request.body,
      });
      const text = await response.text();
      if (response.status !== 200 || text.includes('"errors"')) throw new Error(text);
      return text;
    };
    await send(0);
    const statements = await recorder.during(() => send(1));
    for (let i = 0; i < 200; i++) await send(i); // warm-up (JIT, compiled queries)
    const postmaster = Number(
      (await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0],
    );
    const postgresBefore = await postgresCpu(postmaster);
    const cpu = process.cpuUsage();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < requests) await send(next++);
      }),
    );
    const used = process.cpuUsage(cpu);
    const ms = performance.now() - started;
    const postgresUsed = (await postgresCpu(postmaster)) ?? Number.NaN;
    console.log(
      `${scenario.name}: ${((used.user + used.system) / 1000 / requests).toFixed(2)} ms CPU/request ` +
        `(this process), PostgreSQL ${((postgresUsed - (postgresBefore ?? Number.NaN)) / requests).toFixed(2)} ms CPU/request, ${(requests / (ms / 1000)).toFixed(0)} req/s, ` +
        `${statements.length} statements; load ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
    );
    if (process.env.SHOW_SQL) console.log(statements.join('\n'));
  }
  recorder.restore();
  await tokenCache.close();
  await orm.close();
} finally {
  await database.stop();
}
