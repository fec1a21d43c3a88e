import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import type pg from 'pg';
import { cpuOf, postgresCpu } from './proc-cpu.ts';
import type { Scenario } from './scenarios.ts';

export type LoadOptions = {
  connections: number;
  seconds: number;
  warmupSeconds: number;
  /**
   * Run after the warm-up and again after the measured load, before the CPU counters are read: the bench
   * waits there for the job queue to empty, so that the jobs the requests queued (the event fan-outs of
   * writes) are priced to the requests that queued them and leave no backlog for the next measurement.
   */
  quiesce?: () => Promise<unknown>;
};

export type Measurement = {
  requestsPerSecond: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  requests: number;
  /** Socket errors, timeouts, responses with another status, GraphQL responses with errors. */
  errors: number;
  /** CPU time the server process spent per request (user + system), where the OS tells it. */
  cpuMsPerRequest: number | null;
  /** CPU time PostgreSQL spent per request (all its processes), where the OS tells it. */
  postgresCpuMsPerRequest: number | null;
  /** The same for a streaming replica's PostgreSQL, when one was named (Processes.replica). */
  replicaCpuMsPerRequest: number | null;
  /** The server's resident memory in MiB: the largest sample during warm-up and load, and at the end. */
  rssPeak: number;
  rssEnd: number;
};

/** Load for `seconds`, or, for a scenario loaded by count, `perConnection` requests on each connection. */
function run(url: string, scenario: Scenario, connections: number, seconds: number, perConnection?: number) {
  let n = 0;
  let graphqlErrors = 0;
  return new Promise<Measurement>((resolve, reject) => {
    autocannon(
      {
        url,
        connections,
        ...(perConnection ? { amount: connections * perConnection, timeout: 120 } : { duration: seconds }),
        requests: [
          {
            setupRequest: (request) => ({ ...request, ...scenario.request(n++) }),
            ...(scenario.graphql
              ? {
                  onResponse: (_status: number, body: string) => {
                    if (body.includes('"errors"')) graphqlErrors++;
                  },
                }
              : {}),
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error);
        const expected = result.statusCodeStats?.[`${scenario.status}`]?.count ?? 0;
        resolve({
          // By count, the last second is a fraction: the total over the time taken.
          requestsPerSecond: perConnection
            ? result.requests.total / result.duration
            : result.requests.average,
          p50: result.latency.p50,
          p99: result.latency.p99,
          requests: result.requests.total,
          errors: result.errors + result.timeouts + (result.requests.total - expected) + graphqlErrors,
          cpuMsPerRequest: null,
          postgresCpuMsPerRequest: null,
          replicaCpuMsPerRequest: null,
          rssPeak: 0,
          rssEnd: 0,
        });
      },
    );
  });
}

/**
 * The processes whose CPU time a measurement records: the server, and PostgreSQL's postmaster (and a
 * streaming replica's, if any).
 */
export type Processes = { server: number; postgres: number | null; replica?: number | null };

/** How often the server's RSS is sampled during a measurement. */
const RSS_SAMPLE_MS = 200;

/**
 * Warms the server up on the scenario, then measures it for `seconds` seconds; its RSS is sampled all the
 * while (peak) and once more at the end.
 */
export async function measure(
  url: string,
  processes: Processes,
  scenario: Scenario,
  options: LoadOptions,
): Promise<Measurement> {
  let rssPeak = 0;
  const sample = async () => {
    const rss = await residentMemoryOrNull(processes.server);
    if (rss !== null) rssPeak = Math.max(rssPeak, rss);
  };
  await sample();
  const sampler = setInterval(() => void sample(), RSS_SAMPLE_MS);
  try {
    const perConnection = scenario.requestsPerConnection;
    if (options.warmupSeconds > 0)
      await run(url, scenario, options.connections, options.warmupSeconds, perConnection && 1);
    await options.quiesce?.();
    const cpus = () =>
      Promise.all([
        cpuOf(processes.server).then((cpu) => (cpu ? cpu.user + cpu.system : null)),
        postgresCpu(processes.postgres),
        postgresCpu(processes.replica ?? null),
      ]);
    const before = await cpus();
    const measured = await run(url, scenario, options.connections, options.seconds, perConnection);
    await options.quiesce?.();
    const after = await cpus();
    const perRequest = (index: 0 | 1 | 2) => {
      const [start, end] = [before[index], after[index]];
      return start === null || end === null || measured.requests === 0
        ? null
        : (end - start) / measured.requests;
    };
    clearInterval(sampler);
    await sample();
    const rssEnd = (await residentMemoryOrNull(processes.server)) ?? 0;
    return {
      ...measured,
      cpuMsPerRequest: perRequest(0),
      postgresCpuMsPerRequest: perRequest(1),
      replicaCpuMsPerRequest: perRequest(2),
      rssPeak: Math.max(rssPeak, rssEnd),
      rssEnd,
    };
  } finally {
    clearInterval(sampler);
  }
}

/** A measurement as the bench scripts print it on one line. */
export function describeMeasurement(m: Measurement): string {
  return (
    `${m.requestsPerSecond.toFixed(0).padStart(6)} req/s  p50 ${m.p50} ms  p99 ${m.p99} ms  errors ${m.errors}` +
    (m.cpuMsPerRequest === null ? '' : `  CPU ${m.cpuMsPerRequest.toFixed(2)} ms/request`) +
    (m.postgresCpuMsPerRequest === null ? '' : ` (PostgreSQL ${m.postgresCpuMsPerRequest.toFixed(2)})`) +
    `  RSS peak ${m.rssPeak.toFixed(0)} MiB, end ${m.rssEnd.toFixed(0)} MiB`
  );
}

/** Resident set size of a process, in MiB (`ps` works on Linux and macOS alike). */
export async function residentMemory(pid: number): Promise<number> {
  const { stdout } = await promisify(execFile)('ps', ['-o', 'rss=', '-p', String(pid)]);
  return Number(stdout.trim()) / 1024;
}

/** The same, read from /proc where it is (no process started per sample), or null if the process is gone. */
async function residentMemoryOrNull(pid: number): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kib = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    if (kib !== undefined) return Number(kib) / 1024;
  } catch {
    // No /proc (macOS): ask ps.
  }
  return residentMemory(pid).catch(() => null);
}

/**
 * Waits until the server's job worker has nothing due (jobs due later, such as retries or the schedule's
 * next run, are not waited for) and its event relay has handed out every event (the outbox is empty),
 * or `timeoutMs` has passed; answers how many were still due (jobs and events).
 */
export async function drainJobQueue(client: pg.Client, timeoutMs = 120_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const { rows } = await client.query<{ due: number }>(
      `select (select count(*)::int from graphile_worker._private_jobs where run_at <= now() and attempts < max_attempts)
            + (select count(*)::int from event_relay.outbox) as due`,
    );
    const due = rows[0]?.due ?? 0;
    if (due === 0 || Date.now() - started > timeoutMs) return due;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
