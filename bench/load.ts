import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import type { Scenario } from './scenarios.ts';

export type LoadOptions = { connections: number; seconds: number; warmupSeconds: number };

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
};

function run(url: string, scenario: Scenario, connections: number, seconds: number) {
  let n = 0;
  let graphqlErrors = 0;
  return new Promise<Measurement>((resolve, reject) => {
    autocannon(
      {
        url,
        connections,
        duration: seconds,
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
          requestsPerSecond: result.requests.average,
          p50: result.latency.p50,
          p99: result.latency.p99,
          requests: result.requests.total,
          errors: result.errors + result.timeouts + (result.requests.total - expected) + graphqlErrors,
          cpuMsPerRequest: null,
        });
      },
    );
  });
}

/** Warms the server (process `pid`) up on the scenario, then measures it for `seconds` seconds. */
export async function measure(
  url: string,
  pid: number,
  scenario: Scenario,
  options: LoadOptions,
): Promise<Measurement> {
  if (options.warmupSeconds > 0) await run(url, scenario, options.connections, options.warmupSeconds);
  const cpuBefore = await cpuMilliseconds(pid);
  const measured = await run(url, scenario, options.connections, options.seconds);
  const cpuAfter = await cpuMilliseconds(pid);
  const cpu = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
  return { ...measured, cpuMsPerRequest: cpu === null ? null : cpu / measured.requests };
}

/** Linux counts a process's CPU time in clock ticks of 10 ms (USER_HZ), in /proc/<pid>/stat. */
const MS_PER_TICK = 10;

/** User + system CPU time of a process so far, or null where /proc is not available. */
async function cpuMilliseconds(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The fields after the parenthesised command name; utime and stime are the 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
  } catch {
    return null;
  }
}

/** Resident set size of a process, in MiB (`ps` works on Linux and macOS alike). */
export async function residentMemory(pid: number): Promise<number> {
  const { stdout } = await promisify(execFile)('ps', ['-o', 'rss=', '-p', String(pid)]);
  return Number(stdout.trim()) / 1024;
}
