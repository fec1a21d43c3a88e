/**
 * `npm run bench:postgraphile`: the service's GraphQL invoice page against PostGraphile v5 serving the same
 * page over the same database and data (bench/postgraphile-server.ts: its own process, the application role
 * and the same row-level-security setting per transaction), in alternating rounds.
 *
 * Settings (environment): BENCH_ROUNDS (4, at least 3), BENCH_SECONDS (6), BENCH_WARMUP_SECONDS (2),
 * BENCH_CONNECTIONS (10). Both servers run without their job worker (the service's `JOB_WORKER=false`), so
 * that the seed's queued event fan-outs are not worked off during a measurement.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate, openOrm } from '../src/db/orm.ts';
import { entities } from '../src/modules/registry.ts';
import { type Child, startChild, startFlags, stopChild } from './child.ts';
import { type Measurement, measure, residentMemory } from './load.ts';
import { INVOICE_PAGE_QUERY, PAGE_SIZE, type Scenario } from './scenarios.ts';
import { seed } from './seed.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const settings = {
  rounds: Math.max(3, Number(process.env.BENCH_ROUNDS ?? 4)),
  seconds: Number(process.env.BENCH_SECONDS ?? 6),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 2),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
};
const log = (message: string) => process.stdout.write(`${message}\n`);

/** The same page in PostGraphile's naming: 50 invoices by id, each with customer, items and settlements. */
const POSTGRAPHILE_PAGE_QUERY = `query InvoicePage($first: Int!) {
  allInvoices(first: $first, orderBy: PRIMARY_KEY_ASC) {
    nodes {
      rowId handle status settlementStatus currency date totalInclVat settledAmount
      customerByCustomerId { rowId name billingAddress }
      invoiceItemsByInvoiceId(orderBy: PRIMARY_KEY_ASC) { nodes { rowId title quantity unitAmount amount taxAmount taxRate } }
      settlementsByInvoiceId(orderBy: PRIMARY_KEY_ASC) { nodes { date amount reference } }
    }
    pageInfo { hasNextPage endCursor }
  }
}`;

type Peer = 'service' | 'postgraphile';

function pageScenario(query: string, headers: Record<string, string>): Scenario {
  const body = JSON.stringify({ query, operationName: 'InvoicePage', variables: { first: PAGE_SIZE } });
  return {
    name: 'GraphQL page of 50 invoices',
    status: 200,
    graphql: true,
    request: () => ({ method: 'POST', path: '/graphql', headers, body }),
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};
const range = (values: number[], digits = 2) =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)})`;

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'billing-postgraphile-'));
  await chmod(dataDir, 0o755);
  log('starting the embedded PostgreSQL');
  const database = await startEmbeddedDatabase(dataDir);
  const children: Partial<Record<Peer, Child>> = {};
  try {
    const owner = await openOrm(database.url, { entities, poolMax: 4, owner: true });
    await migrate(owner);
    const data = await seed(owner);
    await owner.close();
    const env = {
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      JOB_WORKER: 'false',
    };
    const flags = await startFlags();
    children.service = await startChild(
      [...flags, path.join(HERE, '..', 'src', 'main.ts')],
      { ...env, RATE_LIMIT_REQUESTS: '0', QUERY_COST_PER_SECOND: '0' },
      '/health',
    );
    children.postgraphile = await startChild(
      [...flags, path.join(HERE, 'postgraphile-server.ts')],
      env,
      '/graphql',
    );
    const json = { 'content-type': 'application/json', 'x-environment': data.environmentId };
    const scenarios: Record<Peer, Scenario> = {
      service: pageScenario(INVOICE_PAGE_QUERY, { ...json, authorization: `Bearer ${data.token}` }),
      postgraphile: pageScenario(POSTGRAPHILE_PAGE_QUERY, json),
    };
    // Both must answer the same 50 invoices, with their items and settlements.
    for (const peer of ['service', 'postgraphile'] as const) {
      const request = scenarios[peer].request(0);
      const response = await fetch(`${children[peer]?.url}${request.path}`, {
        method: request.method,
        headers: request.headers,
        body: request.body,
      }).catch((error: unknown) => {
        throw new Error(`${peer} failed: ${String(error)}\n${children[peer]?.output()}`);
      });
      const body = (await response.json()) as {
        data?: Record<string, { edges?: unknown[]; nodes?: unknown[] }>;
        errors?: unknown;
      };
      const page = body.data?.invoices?.edges ?? body.data?.allInvoices?.nodes;
      if (body.errors || page?.length !== PAGE_SIZE)
        throw new Error(
          `${peer} did not answer a page of ${PAGE_SIZE}: ${JSON.stringify(body).slice(0, 500)}`,
        );
    }
    const results: Record<Peer, Measurement[]> = { service: [], postgraphile: [] };
    const rss: Record<Peer, number[]> = { service: [], postgraphile: [] };
    for (let round = 0; round < settings.rounds; round++) {
      const order: Peer[] = round % 2 === 0 ? ['postgraphile', 'service'] : ['service', 'postgraphile'];
      for (const peer of order) {
        const child = children[peer] as Child;
        const measured = await measure(
          child.url,
          { server: child.process.pid as number, postgres: null },
          scenarios[peer],
          settings,
        );
        results[peer].push(measured);
        rss[peer].push(await residentMemory(child.process.pid as number));
        log(
          `round ${round + 1}  ${peer.padEnd(12)} ${measured.requestsPerSecond.toFixed(0).padStart(5)} req/s  p50 ${measured.p50} ms  p99 ${measured.p99} ms  errors ${measured.errors}` +
            (measured.cpuMsPerRequest === null
              ? ''
              : `  CPU ${measured.cpuMsPerRequest.toFixed(2)} ms/request`) +
            `  RSS ${rss[peer].at(-1)} MiB`,
        );
      }
    }
    const ratio = (pick: (m: Measurement) => number) =>
      results.service.map((m, index) => pick(m) / pick(results.postgraphile[index] as Measurement));
    const load = os
      .loadavg()
      .map((value) => value.toFixed(1))
      .join(' ');
    log('');
    log(
      `Service / PostGraphile, GraphQL page of ${PAGE_SIZE} invoices with customer, items, settlements; ${settings.rounds} alternating rounds, median (min-max); load average at the end ${load}:`,
    );
    log(`| figure | service | PostGraphile | service / PostGraphile |`);
    log(`| --- | --- | --- | --- |`);
    log(
      `| req/s | ${range(
        results.service.map((m) => m.requestsPerSecond),
        0,
      )} | ${range(
        results.postgraphile.map((m) => m.requestsPerSecond),
        0,
      )} | ${range(ratio((m) => m.requestsPerSecond))} |`,
    );
    log(
      `| p99 ms | ${range(
        results.service.map((m) => m.p99),
        0,
      )} | ${range(
        results.postgraphile.map((m) => m.p99),
        0,
      )} | ${range(ratio((m) => m.p99))} |`,
    );
    log(
      `| server CPU ms/request | ${range(results.service.map((m) => m.cpuMsPerRequest ?? Number.NaN))} | ${range(results.postgraphile.map((m) => m.cpuMsPerRequest ?? Number.NaN))} | ${range(ratio((m) => m.cpuMsPerRequest ?? Number.NaN))} |`,
    );
    log(
      `| RSS MiB after each round | ${rss.service.map((v) => v.toFixed(0)).join(', ')} | ${rss.postgraphile.map((v) => v.toFixed(0)).join(', ')} | |`,
    );
  } finally {
    await Promise.all([stopChild(children.service), stopChild(children.postgraphile)]);
    await database.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
