/**
 * `npm run bench:graphql-floor`: what the GraphQL framework alone costs, beside the service and the raw
 * baseline, in one run on one embedded PostgreSQL (issue 21: the targets for customer(id) and the invoice
 * page are ratios to the baseline, a node:http + pg handler).
 *
 * Seeds as `npm run bench` does, starts the service (`npm start`'s flags), the baseline and
 * bench/graphql-floor-server.ts (graphql-yoga with graphql-jit serving the service's schema, every root
 * field answered from memory with what the service answered), checks that the floor answers what the
 * service answers, then loads the two GraphQL scenarios of each server back to back with autocannon in
 * BENCH_ROUNDS rounds whose order rotates, and `{ __typename }` (authenticated, no read) on the service and
 * the floor: the service's answer to it is its per-request work without a read (the token check, the
 * environment's transaction, its plugins). Prints req/s, p99 and CPU per request of each, and their ratios to
 * the baseline's, as a Markdown table for bench/RESULTS.md. Settings: BENCH_ROUNDS (3), BENCH_SECONDS (6),
 * BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (10).
 */
import { deepStrictEqual } from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Child, startChild, startEnvironment, startFlags, stopChild } from './child.ts';
import { drainJobs, seededDatabase, settle } from './database.ts';
import { describeMeasurement, type Measurement, measure } from './load.ts';
import { postmasterOf } from './proc-cpu.ts';
import { percent, type Spread, show, spread, times } from './report.ts';
import { type Scenario, scenarios, sendJson } from './scenarios.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const settings = {
  rounds: Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3)),
  seconds: Number(process.env.BENCH_SECONDS ?? 6),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 2),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
};
const SIDES = ['baseline', 'service', 'floor'] as const;
type FloorSide = (typeof SIDES)[number];
/** One round of a scenario: each side that serves it. */
type Row = Partial<Record<FloorSide, Measurement>>;
const log = (message: string) => process.stdout.write(`${message}\n`);

/** `{ __typename }` with the service's credentials: a GraphQL request that reads nothing. */
function typenameScenario(credentials: Record<string, string>): Scenario {
  return {
    name: 'GraphQL { __typename }',
    status: 200,
    graphql: true,
    request: () => ({
      method: 'POST',
      path: '/graphql',
      headers: credentials,
      body: JSON.stringify({ query: '{ __typename }' }),
    }),
  };
}

async function main(): Promise<void> {
  log('starting the embedded PostgreSQL, migrating and seeding');
  const { dataDir, database, data, remove } = await seededDatabase('floor');
  const children: Partial<Record<FloorSide, Child>> = {};
  try {
    const graphql = scenarios(data).filter((scenario) => scenario.graphql);
    const list = [...graphql, typenameScenario((graphql[0] as Scenario).request(0).headers)];
    // The baseline serves the bench's two queries, not any document.
    const sidesOf = (scenario: Scenario) =>
      SIDES.filter((side) => side !== 'baseline' || graphql.includes(scenario));
    const flags = await startFlags();
    const serverEnv = {
      ...(await startEnvironment()),
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    };
    log('starting the service and the baseline');
    children.service = await startChild(
      [...flags, path.join(HERE, '..', 'src', 'main.ts')],
      { ...serverEnv, JOB_WORKER: 'true', RATE_LIMIT_REQUESTS: '0', QUERY_COST_PER_SECOND: '0' },
      '/health',
    );
    children.baseline = await startChild([...flags, path.join(HERE, 'baseline-server.ts')], serverEnv, '/');
    // The floor answers each root field with what the service answered to the scenario's first request.
    const answers: Record<string, unknown> = {};
    for (const scenario of graphql) {
      const { status, body } = await sendJson(children.service.url, scenario.request(0));
      const { data: fields } = body as { data?: Record<string, unknown> };
      if (status !== 200 || !fields) throw new Error(`${scenario.name}: the service answered ${status}`);
      Object.assign(answers, fields);
    }
    const answersFile = path.join(dataDir, 'floor-answers.json');
    await writeFile(answersFile, JSON.stringify(answers));
    log('starting the GraphQL floor (graphql-yoga + graphql-jit, answers from memory)');
    children.floor = await startChild(
      [...flags, path.join(HERE, 'graphql-floor-server.ts')],
      { ...serverEnv, FLOOR_ANSWERS: answersFile },
      '/graphql?query=%7B__typename%7D',
    );
    for (const scenario of list) {
      const service = await sendJson(children.service.url, scenario.request(0));
      const floor = await sendJson(children.floor.url, scenario.request(0));
      deepStrictEqual(floor, service, `${scenario.name}: the floor must answer what the service answers`);
    }
    const left = await drainJobs(database.url);
    if (left > 0) log(`${left} queued jobs still due after 2 minutes`);
    const postmaster = await postmasterOf(dataDir);

    const measured = new Map<string, Row[]>(list.map((s) => [s.name, []]));
    for (let round = 0; round < settings.rounds; round++) {
      for (const scenario of list) {
        const sides = sidesOf(scenario);
        const order = [...sides.slice(round % sides.length), ...sides.slice(0, round % sides.length)];
        const row: Row = {};
        for (const side of order) {
          const child = children[side] as Child;
          await settle(database.url);
          const processes = { server: child.process.pid as number, postgres: postmaster };
          const m = await measure(child.url, processes, scenario, settings);
          row[side] = m;
          log(`round ${round + 1}  ${scenario.name.padEnd(28)} ${side.padEnd(9)} ${describeMeasurement(m)}`);
        }
        measured.get(scenario.name)?.push(row);
      }
    }
    log(`\n${report(measured)}`);
    const errors = [...measured.values()].flat().flatMap((row) => Object.values(row).map((m) => m.errors));
    if (errors.some((count) => count > 0)) {
      log('some requests failed (see errors above)');
      process.exitCode = 1;
    }
  } finally {
    await Promise.all(SIDES.map((side) => stopChild(children[side])));
    await remove();
  }
}

/** Medians and ranges over the rounds, and each side's ratio to the baseline measured in the same round. */
function report(measured: Map<string, Row[]>): string {
  const lines = [
    '| query | side | req/s | ÷ baseline | p99 ms | ÷ baseline | CPU ms/request | PostgreSQL CPU ms/request |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const [name, rows] of measured) {
    for (const side of SIDES.filter((side) => rows.some((row) => row[side]))) {
      const figure = (pick: (m: Measurement) => number | null) =>
        spread(rows.map((row) => (row[side] ? pick(row[side]) : null)));
      const ratio = (pick: (m: Measurement) => number | null): Spread =>
        side === 'baseline'
          ? null
          : spread(
              rows.map((row) => {
                const [m, baseline] = [row[side], row.baseline];
                if (!m || !baseline) return null;
                const [a, b] = [pick(m), pick(baseline)];
                return a === null || b === null || b === 0 ? null : a / b;
              }),
            );
      lines.push(
        `| ${name} | ${side} | ${show(figure((m) => m.requestsPerSecond))} | ` +
          `${show(
            ratio((m) => m.requestsPerSecond),
            percent,
          )} | ${show(figure((m) => m.p99))} | ` +
          `${show(
            ratio((m) => m.p99),
            times,
          )} | ${show(figure((m) => m.cpuMsPerRequest))} | ` +
          `${show(figure((m) => m.postgresCpuMsPerRequest))} |`,
      );
    }
  }
  return lines.join('\n');
}

await main();
