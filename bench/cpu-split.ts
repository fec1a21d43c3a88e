/**
 * `node bench/cpu-split.ts`: where a REST write's CPU goes, the request against the job worker's
 * delivery of its event. Starts an embedded PostgreSQL, migrates and seeds it as `npm run bench` does,
 * starts the real server (`src/main.ts`), then for each REST operation sends a fixed number of requests
 * (10 connections) and waits until the job queue is empty again. It prints, per request, the server's
 * user and system CPU and PostgreSQL's CPU spent while the requests ran and, separately, while the
 * queue drained afterwards (the event deliveries that `npm run bench`'s window leaves to whatever it
 * measures next), and the jobs each request left.
 *
 * Settings (environment): SPLIT_REQUESTS (1500 per operation), SPLIT_ONLY (a substring of the
 * operation names), and anything the server reads (JOB_WORKER=false: nothing drains).
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { type Child, startChild, startFlags, stopChild } from './child.ts';
import { seededDatabase } from './database.ts';
import { drainJobQueue } from './load.ts';
import { cpuOf, postgresCpu, postmasterOf } from './proc-cpu.ts';
import { scenarios } from './scenarios.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REQUESTS = Number(process.env.SPLIT_REQUESTS ?? 1500);
const ONLY = process.env.SPLIT_ONLY;
async function snapshot(server: number, postmaster: number) {
  const [node, postgres] = await Promise.all([cpuOf(server), postgresCpu(postmaster)]);
  if (!node || postgres === null) throw new Error('the server or PostgreSQL stopped during the run');
  return { user: node.user, system: node.system, postgres };
}

async function jobsDone(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: string }>(
    "select coalesce((select last_value from pg_sequences where schemaname = 'graphile_worker' and sequencename = '_private_jobs_id_seq'), 0) as n",
  );
  return Number(rows[0]?.n ?? 0);
}

async function main(): Promise<void> {
  const { dataDir, database, data, remove } = await seededDatabase('split');
  let service: Child | undefined;
  try {
    const postmaster = await postmasterOf(dataDir);
    service = await startChild(
      [...(await startFlags()), path.join(HERE, '..', 'src', 'main.ts')],
      {
        DATABASE_URL: database.url,
        LOG_LEVEL: 'warn',
        NODE_ENV: 'production',
        RATE_LIMIT_REQUESTS: '0',
        QUERY_COST_PER_SECOND: '0',
      },
      '/health',
    );
    const pid = service.process.pid as number;
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const worker = process.env.JOB_WORKER !== 'false';
    if (worker) await drainJobQueue(client);
    const list = scenarios(data).filter((s) => !s.graphql && (!ONLY || s.name.includes(ONLY)));
    process.stdout.write(
      `load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}\n`,
    );
    for (const scenario of list) {
      let n = 0;
      const load = (amount: number) =>
        new Promise<autocannon.Result>((resolve, reject) =>
          autocannon(
            {
              url: service?.url as string,
              connections: 10,
              amount,
              requests: [{ setupRequest: (request) => ({ ...request, ...scenario.request(n++) }) }],
            },
            (error, result) => (error ? reject(error) : resolve(result)),
          ),
        );
      await load(300); // warm-up
      if (worker) await drainJobQueue(client);
      await client.query('checkpoint');
      const jobs0 = await jobsDone(client);
      const before = await snapshot(pid, postmaster);
      const result = await load(REQUESTS);
      const during = await snapshot(pid, postmaster);
      const left = worker ? await drainJobQueue(client) : 0;
      const after = await snapshot(pid, postmaster);
      const jobs = (await jobsDone(client)) - jobs0;
      const ok = result.statusCodeStats?.[`${scenario.status}`]?.count ?? 0;
      const per = (a: number, b: number) => ((b - a) / REQUESTS).toFixed(2);
      process.stdout.write(
        `${scenario.name.padEnd(28)} ${ok}/${REQUESTS} ok  ${result.requests.average} req/s  ` +
          `requests: node ${per(before.user + before.system, during.user + during.system)} ms (user ${per(before.user, during.user)}, sys ${per(before.system, during.system)}), postgres ${per(before.postgres, during.postgres)} ms;  ` +
          `drain after: node ${per(during.user + during.system, after.user + after.system)} ms, postgres ${per(during.postgres, after.postgres)} ms;  ` +
          `jobs/request ${(jobs / REQUESTS).toFixed(2)}${left ? `  (${left} still due)` : ''}\n`,
      );
    }
    process.stdout.write(
      `load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}\n`,
    );
    await client.end();
  } finally {
    await stopChild(service);
    await remove();
  }
}

await main();
