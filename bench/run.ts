/**
 * `npm run bench`: the service against a raw baseline and against PostGraphile v5, in one run, on one
 * embedded PostgreSQL.
 *
 * Starts PostgreSQL in a temporary directory, migrates and seeds it, counts the SQL statements of
 * each endpoint in-process (and checks that the baseline answers what the service answers), then
 * starts the real server (`node src/main.ts`, its job worker on as in production), the baseline
 * (`bench/baseline-server.ts`) and PostGraphile (`bench/postgraphile-server.ts`) as child processes,
 * checks that PostGraphile answers what the service answers, and loads each endpoint of each server that
 * serves it back to back with autocannon over loopback, in BENCH_ROUNDS rounds whose order rotates. The
 * last scenario, for memory only, is the heaviest GraphQL document the limits admit, on the service.
 * Writes bench/RESULTS.md (keeping its hand-written part) and prints the tables.
 *
 * Settings (environment): BENCH_ROUNDS (3), BENCH_SECONDS (6), BENCH_WARMUP_SECONDS (2),
 * BENCH_CONNECTIONS (10), BENCH_ONLY (a substring of the endpoint names: measure only those; RESULTS.md
 * is left alone; `npm run bench:postgraphile` is BENCH_ONLY=GraphQL), BENCH_PROFILE=1 (the server writes
 * a CPU profile, `node --cpu-prof`, to bench/profiles/), DB_POOL_MAX and BENCH_SERVER_NODE_OPTIONS
 * (NODE_OPTIONS, e.g. V8 heap flags) for all three servers.
 */
import { deepStrictEqual } from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { createApp } from '../src/app.ts';
import { TokenCache } from '../src/auth/token-cache.ts';
import { EXECUTION_LIMITS } from '../src/config.ts';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate, type Orm, openOrm } from '../src/db/orm.ts';
import { MAX_PAGE_SIZE } from '../src/db/pagination.ts';
import { GRAPHQL_LIMITS } from '../src/limits/graphql-limits.ts';
import { MAX_LINES_PER_INVOICE } from '../src/modules/invoice/invoice.input.ts';
import { entities } from '../src/modules/registry.ts';
import { Baseline, createBaselineServer } from './baseline-server.ts';
import { type Child, startChild, startEnvironment, startFlags, stopChild } from './child.ts';
import { drainJobs, settle } from './database.ts';
import { describeMeasurement, measure } from './load.ts';
import { checkSameAnswers, peerScenario, postgraphilePeers } from './postgraphile.ts';
import { startPostgraphile } from './postgraphile-server.ts';
import { postmasterOf } from './proc-cpu.ts';
import { type BenchReport, renderReport, type ScenarioResult, type Side, targets } from './report.ts';
import { type BenchRequest, heaviestPageScenario, PAGE_SIZE, type Scenario, scenarios } from './scenarios.ts';
import { type HeavyData, SEED, type SeededData, seed, seedHeavy } from './seed.ts';
import { StatementRecorder } from './statements.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const RESULTS = path.join(HERE, 'RESULTS.md');
const HAND_WRITTEN_MARKER = '<!-- Everything below this line is written by hand; npm run bench keeps it. -->';

const settings = {
  rounds: Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3)),
  seconds: Number(process.env.BENCH_SECONDS ?? 6),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 2),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
  only: process.env.BENCH_ONLY,
  profile: process.env.BENCH_PROFILE === '1',
  poolMax: process.env.DB_POOL_MAX,
  nodeOptions: process.env.BENCH_SERVER_NODE_OPTIONS,
};

const log = (message: string) => process.stdout.write(`${message}\n`);

type Reply = { status: number; body: unknown };

/** A response body with what differs between two equal requests (new ids, timestamps) taken out. */
// biome-ignore lint/suspicious/noExplicitAny: response bodies are untyped JSON
function comparable(scenario: Scenario, body: any): unknown {
  const copy = structuredClone(body);
  if (scenario.name.startsWith('POST')) {
    delete copy.id;
    delete copy.createdAt;
    for (const item of copy.items ?? []) delete item.id;
  }
  if (scenario.name.startsWith('PATCH')) delete copy.updatedAt;
  return copy;
}

/**
 * Runs each scenario once on the in-process app and on an in-process baseline: their answers must be
 * equal (the baseline does the same work), and the statements of a second request of each are counted.
 */
async function inProcessChecks(
  orm: Orm,
  databaseUrl: string,
  list: Scenario[],
  data: SeededData,
  heavy: HeavyData | null,
) {
  const recorder = new StatementRecorder();
  // As the server runs it (TOKEN_CACHE_SECONDS): the second request of each scenario finds its token cached.
  const tokenCache = new TokenCache(databaseUrl, 60_000);
  await tokenCache.start();
  const app = createApp({ orm, logger: pino({ level: 'silent' }), tokenCache });
  const baseline = new Baseline(databaseUrl, 2);
  const server = createBaselineServer(baseline).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const baselineUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // PostGraphile in-process too, to count its statements (the measured one is a process of its own).
  const peers = postgraphilePeers(data);
  const postgraphile = list.some((scenario) => peers.has(scenario.name))
    ? await startPostgraphile(databaseUrl, 2)
    : null;
  postgraphile?.server.listen(0, '127.0.0.1');
  if (postgraphile) await once(postgraphile.server, 'listening');
  const postgraphileUrl = `http://127.0.0.1:${(postgraphile?.server.address() as AddressInfo | null)?.port}`;
  const send = async (side: 'service' | 'baseline', request: BenchRequest): Promise<Reply> => {
    // A copy: the in-process fetch adds content-length to the headers object it is given.
    const init = { method: request.method, headers: { ...request.headers }, body: request.body };
    const response =
      side === 'service'
        ? await app.fetch(`http://bench${request.path}`, init)
        : await fetch(`${baselineUrl}${request.path}`, init);
    return { status: response.status, body: await response.json() };
  };
  try {
    const statements = new Map<string, Partial<Record<Side, string[]>>>();
    for (const scenario of list) {
      const service = await send('service', scenario.request(0));
      const raw = await send('baseline', scenario.request(0));
      if (service.status !== scenario.status) {
        throw new Error(
          `${scenario.name}: the service answered ${service.status}: ${JSON.stringify(service.body)}`,
        );
      }
      deepStrictEqual(
        comparable(scenario, raw.body),
        comparable(scenario, service.body),
        `${scenario.name}: the baseline must answer what the service answers`,
      );
      statements.set(scenario.name, {
        service: await recorder.during(() => send('service', scenario.request(1))),
        baseline: await recorder.during(() => send('baseline', scenario.request(1))),
      });
      const peer = peers.get(scenario.name);
      if (postgraphile && peer) {
        const ask = async (n: number) => {
          const request = peer.request(n);
          const response = await fetch(`${postgraphileUrl}${request.path}`, {
            method: request.method,
            headers: request.headers,
            body: request.body,
          });
          await response.json();
        };
        await ask(0);
        (statements.get(scenario.name) as Partial<Record<Side, string[]>>).postgraphile =
          await recorder.during(() => ask(1));
      }
    }
    const page = list.find((scenario) => scenario.name.startsWith('GraphQL invoices'));
    const pageOf = async (first: number) => {
      if (!page) return [];
      const request = page.request(0);
      const body = JSON.stringify({ ...JSON.parse(request.body ?? '{}'), variables: { first } });
      return recorder.during(() => send('service', { ...request, body }));
    };
    const pageStatements = { one: await pageOf(1), fifty: await pageOf(PAGE_SIZE) };
    return {
      statements,
      pageStatements,
      heaviest: heavy && (await heaviestAllowed(heavy, (request) => send('service', request))),
    };
  } finally {
    recorder.restore();
    await tokenCache.close();
    server.close();
    await baseline.close();
    postgraphile?.server.close();
    await postgraphile?.release();
  }
}

/**
 * The heaviest GraphQL document the limits admit, on the environment of invoices of the most lines: the
 * most aliases (up to the alias limit) of the largest page the query cost limit lets through (a refused
 * document costs no execution), then the largest page whose answer stays under the response-size limit,
 * estimated from the size of a page of one and confirmed by asking. It must answer without errors.
 */
async function heaviestAllowed(heavy: HeavyData, send: (request: BenchRequest) => Promise<Reply>) {
  const ask = async (scenario: Scenario) =>
    // biome-ignore lint/suspicious/noExplicitAny: a GraphQL answer
    (await send(scenario.request(0))) as { status: number; body: any };
  const codes = (body: { errors?: { extensions?: { code?: string } }[] }) =>
    (body.errors ?? []).map((error) => error.extensions?.code);
  let aliases = GRAPHQL_LIMITS.maxAliases;
  let pageSize = MAX_PAGE_SIZE;
  for (;;) {
    const { body } = await ask(heaviestPageScenario(heavy, aliases, pageSize));
    if (!codes(body).includes('QUERY_TOO_COMPLEX')) break;
    if (aliases > 1) aliases--;
    else if (pageSize > 1) pageSize = Math.floor(pageSize / 2);
    else throw new Error('the query cost limit admits no page of one invoice with its items');
  }
  const one = await ask(heaviestPageScenario(heavy, aliases, 1));
  const bytesPerInvoice = Buffer.byteLength(JSON.stringify(one.body)) / aliases;
  pageSize = Math.min(
    pageSize,
    heavy.invoices,
    Math.floor((0.95 * EXECUTION_LIMITS.maxResponseBytes) / aliases / bytesPerInvoice),
  );
  for (; pageSize >= 1; pageSize = Math.floor(pageSize * 0.9)) {
    const scenario = heaviestPageScenario(heavy, aliases, pageSize);
    const { status, body } = await ask(scenario);
    if (codes(body).includes('RESPONSE_TOO_LARGE')) continue;
    if (status !== 200 || body.errors)
      throw new Error(
        `${scenario.name}: the service answered ${status}: ${JSON.stringify(body).slice(0, 500)}`,
      );
    return { scenario, aliases, pageSize, bytes: Buffer.byteLength(JSON.stringify(body)) };
  }
  throw new Error('the response-size limit admits no page of one invoice of the most lines');
}

function machine(postgres: string): string {
  const cpus = os.cpus();
  const load = os.loadavg().map((value) => value.toFixed(1));
  return (
    `${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, load average ${load.join(' ')} at the start; ` +
    `Node ${process.version}; ${postgres} (embedded, default settings).`
  );
}

async function writeResults(markdown: string): Promise<void> {
  const previous = existsSync(RESULTS) ? await readFile(RESULTS, 'utf8') : '';
  const index = previous.indexOf(HAND_WRITTEN_MARKER);
  const handWritten = index >= 0 ? previous.slice(index) : `${HAND_WRITTEN_MARKER}\n`;
  await writeFile(RESULTS, `${markdown}\n${handWritten}`);
}

/** What the memory scenario sends, for the report's settings. */
function memoryText(heaviest: { aliases: number; pageSize: number; bytes: number }): string {
  return (
    ` Memory scenario: ${heaviest.aliases} aliases × invoices(first: ${heaviest.pageSize}) with customer, items and ` +
    `settlements over invoices of ${MAX_LINES_PER_INVOICE} lines (an environment of its own), the most aliases ` +
    `the alias limit (${GRAPHQL_LIMITS.maxAliases}) and the query cost limit (${GRAPHQL_LIMITS.maxCost}) ` +
    `admit together and the largest page whose answer (${(heaviest.bytes / 2 ** 20).toFixed(1)} MiB) the ` +
    `response-size limit (${(EXECUTION_LIMITS.maxResponseBytes / 2 ** 20).toFixed(0)} MiB) lets through; ` +
    'each connection sends 3 of them (1 in the warm-up), however long they take.'
  );
}

/** The order of the sides in a round: rotated by one each round, so that each goes first in turn. */
function orderOf(sides: Side[], round: number): Side[] {
  const base: Side[] = (['baseline', 'service', 'postgraphile'] as const).filter((side) =>
    sides.includes(side),
  );
  const shift = round % base.length;
  return [...base.slice(shift), ...base.slice(0, shift)];
}

const HEAVIEST = 'GraphQL heaviest allowed';
/** Enough invoices of the most lines for the largest page the response-size limit lets through. */
const HEAVY_INVOICES = 40;

async function main(): Promise<void> {
  const started = Date.now();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'billing-bench-'));
  // Run as root, PostgreSQL runs as its own user and must be able to enter the directory.
  await chmod(dataDir, 0o755);
  log('starting the embedded PostgreSQL');
  const database = await startEmbeddedDatabase(dataDir);
  const children: Partial<Record<Side, Child>> = {};
  try {
    // The owner migrates and seeds (row-level security binds the app role to one environment per transaction).
    const owner = await openOrm(database.url, { entities, poolMax: 4, owner: true });
    await migrate(owner);
    log(`seeding ${SEED.customers} customers and ${SEED.invoices} invoices`);
    const data: SeededData = await seed(owner);
    const selected = (name: string) => !settings.only || name.includes(settings.only);
    let heavy: HeavyData | null = null;
    if (selected(HEAVIEST)) {
      log(
        `seeding ${HEAVY_INVOICES} invoices of ${MAX_LINES_PER_INVOICE} lines in an environment of their own, for the memory scenario`,
      );
      heavy = await seedHeavy(owner, database.url, HEAVY_INVOICES);
    }
    await owner.close();
    const orm = await openOrm(database.url, { entities, poolMax: 4 });
    const list = scenarios(data).filter((scenario) => selected(scenario.name));
    if (list.length === 0 && !selected(HEAVIEST))
      throw new Error(`BENCH_ONLY=${settings.only} matches no endpoint`);
    log('counting SQL statements and comparing the answers of the service and the baseline');
    const { statements, pageStatements, heaviest } = await inProcessChecks(
      orm,
      database.url,
      list,
      data,
      heavy,
    );
    if (heaviest) list.push(heaviest.scenario);
    const [postgres] = await orm.em
      .getConnection()
      .execute<{ version: string }[]>("select current_setting('server_version') as version");
    await orm.close();

    const serverEnv = {
      // As `npm start` sets them (its allocator settings), for the three servers alike.
      ...(await startEnvironment()),
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      ...(settings.poolMax ? { DB_POOL_MAX: settings.poolMax } : {}),
      ...(settings.nodeOptions ? { NODE_OPTIONS: settings.nodeOptions } : {}),
    };
    const peers = postgraphilePeers(data);
    const withPeer = list.some((scenario) => peers.has(scenario.name));
    const profileDir = path.join(HERE, 'profiles');
    const main = path.join(HERE, '..', 'src', 'main.ts');
    const flags = await startFlags();
    log(`starting the service, the baseline${withPeer ? ' and PostGraphile' : ''}`);
    children.service = await startChild(
      [...flags, ...(settings.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), main],
      // The job worker runs in the server (JOB_WORKER's default, as in production): the event fan-outs of
      // its writes are the service's work and count in its CPU figures.
      { ...serverEnv, JOB_WORKER: 'true', RATE_LIMIT_REQUESTS: '0', QUERY_COST_PER_SECOND: '0' },
      '/health',
    );
    // The same V8 settings for the baseline and PostGraphile: their CPU figures then compare like for like.
    children.baseline = await startChild([...flags, path.join(HERE, 'baseline-server.ts')], serverEnv, '/');
    if (withPeer) {
      children.postgraphile = await startChild(
        [...flags, path.join(HERE, 'postgraphile-server.ts')],
        serverEnv,
        '/graphql',
      );
    }
    const left = await drainJobs(database.url);
    log(left === 0 ? "the seed's queued jobs are done" : `${left} queued jobs still due after 2 minutes`);
    if (children.postgraphile) {
      log('comparing the answers of the service and PostGraphile');
      for (const scenario of list) {
        const peer = peers.get(scenario.name);
        if (!peer) continue;
        for (const n of [0, 1]) {
          await checkSameAnswers(
            scenario,
            peer,
            {
              service: children.service.url,
              postgraphile: children.postgraphile.url,
            },
            n,
          );
        }
      }
    }
    const postmaster = await postmasterOf(dataDir);

    const results: ScenarioResult[] = list.map((scenario) => {
      const memoryOnly = scenario.name.startsWith(HEAVIEST);
      const sides: Side[] = memoryOnly
        ? ['service']
        : [
            'service',
            'baseline',
            ...(children.postgraphile && peers.has(scenario.name) ? (['postgraphile'] as const) : []),
          ];
      return {
        name: scenario.name,
        sides,
        rounds: [],
        statements: statements.get(scenario.name) ?? {},
        memoryOnly,
      };
    });
    const scenarioOf = (scenario: Scenario, side: Side): Scenario => {
      const peer = peers.get(scenario.name);
      return side === 'postgraphile' && peer ? peerScenario(scenario, peer) : scenario;
    };
    let backlog = 0;
    const quiesce = async () => {
      const due = await drainJobs(database.url, 60_000);
      backlog = Math.max(backlog, due);
    };
    // The measured scenarios' rounds first, then the memory scenario's: the heap the heaviest documents
    // grow would otherwise be in every later round of the others (their speed and their RSS).
    const phases = [false, true].map((memoryOnly) =>
      [...list.entries()].filter(([index]) => (results[index] as ScenarioResult).memoryOnly === memoryOnly),
    );
    // One unmeasured pass of every measured scenario on every server first: a fresh process grows to its
    // working size (compiled code, the heap's young generation, pools) in the first load it sees, which
    // would otherwise count as growth from the first round to the last in whichever scenario came first.
    if (settings.warmupSeconds > 0) {
      log('warming every server up on every scenario (not measured)');
      for (const [index, scenario] of phases[0] ?? []) {
        for (const side of (results[index] as ScenarioResult).sides) {
          const child = children[side] as Child;
          await measure(
            child.url,
            { server: child.process.pid as number, postgres: null },
            scenarioOf(scenario, side),
            { ...settings, seconds: settings.warmupSeconds, warmupSeconds: 0, quiesce },
          );
        }
      }
    }
    for (const phase of phases)
      for (let round = 0; round < settings.rounds; round++) {
        for (const [index, scenario] of phase) {
          const result = results[index] as ScenarioResult;
          const order = orderOf(result.sides, round);
          const measured: ScenarioResult['rounds'][number]['measured'] = {};
          for (const side of order) {
            const child = children[side] as Child;
            await settle(database.url);
            const m = await measure(
              child.url,
              { server: child.process.pid as number, postgres: postmaster },
              scenarioOf(scenario, side),
              { ...settings, quiesce },
            );
            measured[side] = m;
            log(
              `round ${round + 1}  ${scenario.name.padEnd(30)} ${side.padEnd(12)} ${describeMeasurement(m)}`,
            );
          }
          result.rounds.push({ order, measured });
        }
      }

    const seedText = `${SEED.customers} customers, ${SEED.invoices} invoices (3 items each; a third drafts, the rest booked, every other booked one partly settled)`;
    const report: BenchReport = {
      date: new Date().toISOString().slice(0, 16).replace('T', ' '),
      machine: machine(`PostgreSQL ${postgres?.version}`),
      rounds: settings.rounds,
      settings:
        `Load: autocannon, ${settings.connections} connections over loopback, ${settings.warmupSeconds} s warm-up ` +
        `then ${settings.seconds} s measured per endpoint and server, after one unmeasured ${settings.warmupSeconds} s pass of every endpoint on every server; the service, the baseline and (on the two ` +
        `GraphQL queries it serves) PostGraphile back to back, ${settings.rounds} rounds, the order rotating by one ` +
        `each round; then the memory scenario's ${settings.rounds} rounds. Before each measurement the database is vacuumed, analyzed and checkpointed; after the ` +
        `warm-up and after the measured load the run waits until the job queue has nothing due, so no backlog ` +
        `of one measurement lands in another (largest backlog left after a load: ${backlog} job(s)). ` +
        `Service: \`${[...Object.entries(await startEnvironment()).map(([name, value]) => `${name}=${value}`), 'node', ...flags, 'src/main.ts'].join(' ')}\` (as \`npm start\`), JOB_WORKER on (its ` +
        `job worker in the process, as in production: the event fan-outs of writes are part of its cost), ` +
        `LOG_LEVEL=warn, rate limit and query cost budget off, DB_POOL_MAX=${settings.poolMax ?? 'default (10)'}` +
        (settings.nodeOptions ? `, NODE_OPTIONS=\`${settings.nodeOptions}\`` : '') +
        `; no Idempotency-Key sent. Baseline (\`bench/baseline-server.ts\`) and PostGraphile 5 with the Amber ` +
        `preset (\`bench/postgraphile-server.ts\`: role \`billing_app\` and \`app.environment_id\` per ` +
        `transaction, the service's row-level security; no token check) run with the same node flags and ` +
        `pool size. PostGraphile's answers were checked equal to the service's before the load.` +
        (heaviest ? memoryText(heaviest) : '') +
        ` Data: ${seedText}.`,
      scenarios: results,
      pageStatements,
      durationSeconds: (Date.now() - started) / 1000,
    };
    const markdown = renderReport(report);
    log(`\n${markdown}`);
    if (settings.only) {
      log('BENCH_ONLY is set: bench/RESULTS.md is left as it was.');
    } else {
      await writeResults(markdown);
      log(`written to ${path.relative(process.cwd(), RESULTS)}`);
    }
    const missed = targets(report).filter((target) => !target.met);
    log(missed.length === 0 ? 'every target is met' : `${missed.length} target(s) not met (see above)`);
  } finally {
    await Promise.all([
      stopChild(children.service),
      stopChild(children.baseline),
      stopChild(children.postgraphile),
    ]);
    await database.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
