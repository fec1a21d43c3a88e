import { execFile } from 'node:child_process';
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
        });
      },
    );
  });
}

/** Warms the server up on the scenario, then measures it for `seconds` seconds. */
export async function measure(url: string, scenario: Scenario, options: LoadOptions): Promise<Measurement> {
  if (options.warmupSeconds > 0) await run(url, scenario, options.connections, options.warmupSeconds);
  return run(url, scenario, options.connections, options.seconds);
}

/** Resident set size of a process, in MiB (`ps` works on Linux and macOS alike). */
export async function residentMemory(pid: number): Promise<number> {
  const { stdout } = await promisify(execFile)('ps', ['-o', 'rss=', '-p', String(pid)]);
  return Number(stdout.trim()) / 1024;
}
