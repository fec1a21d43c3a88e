/**
 * `npm run bench:replica`: reads on a streaming replica (DATABASE_REPLICA_URLS), against the primary alone.
 *
 * Starts an embedded PostgreSQL primary and a real streaming replica of it (test/support/replica.ts),
 * migrates and seeds the primary as `npm run bench` does (bench/seed.ts), waits for the replica to have
 * replayed it, and starts two server processes on the same data: one with DATABASE_REPLICA_URLS, one
 * without. Then:
 * 1. the read scenarios of `npm run bench` (bench/scenarios.ts) against each, alternating which goes first:
 *    req/s, p99, the server's and each PostgreSQL's CPU per request (primary and replica, all their
 *    processes), and where the reads went (db_read_transactions_total at the server's /metrics);
 * 2. read-your-own-writes under load: writers, each with a token of its own, PATCH their customer or
 *    create an invoice and read it back at once over REST and GraphQL, through the replica-enabled
 *    server, while replay runs, then while it is paused (pg_wal_replay_pause), then after it resumed; a
 *    token that never writes reads the writers' customers meanwhile (it may see them late: that shows the
 *    replica really lagged). Stale reads of a writer's own write must be 0.
 * Prints a Markdown section and writes it to bench/RESULTS.md (replacing its previous one); exits non-zero
 * when a check fails.
 *
 * Settings (environment): BENCH_ROUNDS (2), BENCH_SECONDS (6), BENCH_WARMUP_SECONDS (2),
 * BENCH_CONNECTIONS (10), BENCH_WRITERS (16), BENCH_PHASE_SECONDS (8), BENCH_REPLICA_WRITE_RESULTS (1; 0
 * leaves bench/RESULTS.md alone).
 */
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AccessService } from '../src/auth/access.service.ts';
import { migrate, openOrm } from '../src/db/orm.ts';
import { entities } from '../src/modules/registry.ts';
import { startPrimaryWithReplica } from '../test/support/replica.ts';
import { type Child, checkRecorder, runBounded, startChild, startFlags, stopChild } from './child.ts';
import { type Measurement, measure } from './load.ts';
import { show, spread } from './report.ts';
import { CUSTOMER_QUERY, invoiceItems, scenarios } from './scenarios.ts';
import { SEED, seed } from './seed.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const RESULTS = path.join(HERE, 'RESULTS.md');
const HEADING = '## Read replica (`npm run bench:replica`)';
const settings = {
  rounds: Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2)),
  seconds: Number(process.env.BENCH_SECONDS ?? 6),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 2),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
  writers: Number(process.env.BENCH_WRITERS ?? 16),
  phaseSeconds: Number(process.env.BENCH_PHASE_SECONDS ?? 8),
  writeResults: process.env.BENCH_REPLICA_WRITE_RESULTS !== '0',
};
/** The whole script stops (and cleans up) after this long, whatever it is doing. */
const HARD_LIMIT_MS = 10 * 60_000;
const METRICS_TOKEN = 'bench-replica-metrics-token';
const READ_SCENARIOS = ['GET /invoices/{id}', 'GraphQL invoices(first: 50)', 'GraphQL customer(id)'];
const INVOICE_QUERY = 'query InvoiceById($id: UUID!) { invoice(id: $id) { id memo } }';

const log = (message: string) => process.stdout.write(`${message}\n`);
const { check, lines: checkLines, failures } = checkRecorder();
/** Stops whatever runs (servers, PostgreSQL); set once they are started. */
let cleanup: () => Promise<void> = async () => {};

type Client = { headers: Record<string, string> };
// biome-ignore lint/suspicious/noExplicitAny: response bodies are untyped JSON
type Reply = { status: number; json: any };
// biome-ignore lint/suspicious/noExplicitAny: response bodies are untyped JSON
type Json = any;

async function send(base: string, client: Client, method: string, pathname: string, body?: unknown) {
  const response = await fetch(`${base}${pathname}`, {
    method,
    headers: {
      ...client.headers,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: response.status, json } as Reply;
}

const graphql = (base: string, client: Client, query: string, variables: Record<string, unknown>) =>
  send(base, client, 'POST', '/graphql', { query, variables });

/** db_read_transactions_total of a server, by `target/reason`. */
async function readCounts(server: Child): Promise<Record<string, number>> {
  const response = await fetch(`${server.url}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  const text = await response.text();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(
    /^db_read_transactions_total\{target="([^"]+)",reason="([^"]+)"\} (\d+)/gm,
  )) {
    counts[`${match[1]}/${match[2]}`] = Number(match[3]);
  }
  return counts;
}

const difference = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(after)
      .map(([key, value]) => [key, value - (before[key] ?? 0)] as const)
      .filter(([, value]) => value > 0),
  );
const total = (counts: Record<string, number>, target?: string) =>
  Object.entries(counts)
    .filter(([key]) => !target || key.startsWith(`${target}/`))
    .reduce((sum, [, value]) => sum + value, 0);
const describeCounts = (counts: Record<string, number>) =>
  Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key} ${value}`)
    .join(', ') || 'none';

function loadAverage(): string {
  return os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
}

/** Replaces the section under HEADING in bench/RESULTS.md (up to the next `## `), or appends it. */
async function writeSection(section: string): Promise<void> {
  const previous = await readFile(RESULTS, 'utf8');
  const start = previous.indexOf(`\n${HEADING}\n`);
  if (start < 0) {
    await writeFile(RESULTS, `${previous.trimEnd()}\n\n${section}\n`);
    return;
  }
  const next = previous.indexOf('\n## ', start + HEADING.length + 1);
  const rest = next < 0 ? '' : previous.slice(next);
  await writeFile(RESULTS, `${previous.slice(0, start)}\n${section}\n${rest}`);
}

type Row = { name: string; plain: Measurement[]; replica: Measurement[]; routed: Record<string, number> };

async function main(): Promise<void> {
  const started = Date.now();
  const loadAtStart = loadAverage();
  log('starting a primary and a streaming replica, migrating and seeding');
  const cluster = await startPrimaryWithReplica();
  const servers: Child[] = [];
  cleanup = async () => {
    await Promise.all(servers.splice(0).map((server) => stopChild(server)));
    await cluster.stop();
  };
  const lines: string[] = [];
  try {
    const owner = await openOrm(cluster.primaryUrl, { entities, poolMax: 2, owner: true });
    await migrate(owner);
    const data = await seed(owner);
    const access = new AccessService(owner.em.fork());
    await cluster.caughtUp(60_000);
    const [{ version } = { version: '?' }] = await cluster.replicaAdminQuery<{ version: string }>(
      "select current_setting('server_version') as version",
    );

    const flags = await startFlags();
    const entry = path.join(HERE, '..', 'src', 'main.ts');
    const start = (env: Record<string, string>) =>
      startChild(
        [...flags, entry],
        {
          DATABASE_URL: cluster.primaryUrl,
          MIGRATE_ON_START: 'false',
          JOB_WORKER: 'false',
          LOG_LEVEL: 'warn',
          NODE_ENV: 'production',
          RATE_LIMIT_REQUESTS: '0',
          QUERY_COST_PER_SECOND: '0',
          METRICS_TOKEN,
          ...env,
        },
        '/health',
      );
    const plain = await start({});
    servers.push(plain);
    const replicated = await start({ DATABASE_REPLICA_URLS: cluster.replicaUrl });
    servers.push(replicated);

    // 1. The read scenarios against each server, the order alternating round by round.
    const rows: Row[] = scenarios(data)
      .filter((scenario) => READ_SCENARIOS.includes(scenario.name))
      .map((scenario) => ({ name: scenario.name, plain: [], replica: [], routed: {} }));
    const list = scenarios(data).filter((scenario) => READ_SCENARIOS.includes(scenario.name));
    const pids = { postgres: cluster.primaryPid, replica: cluster.replicaPid };
    for (let round = 0; round < settings.rounds; round++) {
      for (const [index, scenario] of list.entries()) {
        const row = rows[index] as Row;
        const order = (round + index) % 2 === 0 ? ['plain', 'replica'] : ['replica', 'plain'];
        for (const side of order as ('plain' | 'replica')[]) {
          const server = side === 'plain' ? plain : replicated;
          const before = side === 'replica' ? await readCounts(server) : {};
          const m = await measure(server.url, { server: server.process.pid as number, ...pids }, scenario, {
            ...settings,
          });
          if (side === 'replica') {
            for (const [key, value] of Object.entries(difference(await readCounts(server), before)))
              row.routed[key] = (row.routed[key] ?? 0) + value;
          }
          row[side].push(m);
          log(
            `round ${round + 1} ${side.padEnd(7)} ${scenario.name.padEnd(28)} ${m.requestsPerSecond.toFixed(0).padStart(5)} req/s  p99 ${m.p99} ms  server ${m.cpuMsPerRequest?.toFixed(2)} ms  primary PG ${m.postgresCpuMsPerRequest?.toFixed(2)} ms  replica PG ${m.replicaCpuMsPerRequest?.toFixed(2)} ms/req  errors ${m.errors}`,
          );
        }
      }
    }
    const plainReads = await readCounts(plain);
    const loadAfterReads = loadAverage();

    // 2. Read-your-own-writes under load, through the replica-enabled server.
    const url = replicated.url;
    const client = async (name: string): Promise<Client> => {
      const { secret } = await access.createToken([data.environmentId], name);
      return { headers: { authorization: `Bearer ${secret}`, 'x-environment': data.environmentId } };
    };
    type Writer = Client & { customerId: string; acknowledged: number };
    const writers: Writer[] = [];
    for (let n = 0; n < settings.writers; n++) {
      const writer = await client(`writer ${n}`);
      const created = await send(url, writer, 'POST', '/customers', {
        name: `Writer ${n} #0`,
        handle: `writer-${n}`,
        currency: 'EUR',
      });
      if (created.status !== 201) throw new Error(`creating a writer's customer: ${JSON.stringify(created)}`);
      writers.push({ ...writer, customerId: created.json.id, acknowledged: 0 });
    }
    const observer = await client('observer');
    await cluster.caughtUp(60_000);

    const PHASES = ['replay running', 'replay paused', 'replay resumed'] as const;
    type Phase = (typeof PHASES)[number];
    type Tally = {
      writes: number;
      writeErrors: number;
      reads: number;
      stale: number;
      readErrors: number;
      observed: number;
      observedBehind: number;
      routed: Record<string, number>;
      lagBytes?: number;
    };
    const tallies = new Map<Phase, Tally>(
      PHASES.map((phase) => [
        phase,
        {
          writes: 0,
          writeErrors: 0,
          reads: 0,
          stale: 0,
          readErrors: 0,
          observed: 0,
          observedBehind: 0,
          routed: {},
        },
      ]),
    );
    let phase: Phase = PHASES[0];
    let running = true;
    const staleExamples: string[] = [];
    const tally = () => tallies.get(phase) as Tally;
    const readBack = (what: string, reply: Reply, ok: (json: Json) => boolean) => {
      const t = tally();
      t.reads++;
      if (reply.status >= 500 || reply.status === 429) t.readErrors++;
      else if (!ok(reply.json)) {
        t.stale++;
        if (staleExamples.length < 5) staleExamples.push(`${what}: ${JSON.stringify(reply).slice(0, 200)}`);
      }
    };
    const writeLoop = async (writer: Writer, n: number) => {
      for (let k = 1; running; k++) {
        if (k % 2 === 1) {
          const name = `Writer ${n} #${k}`;
          const patched = await send(url, writer, 'PATCH', `/customers/${writer.customerId}`, { name });
          tally().writes++;
          if (patched.status !== 200) {
            tally().writeErrors++;
            continue;
          }
          writer.acknowledged = k;
          const [rest, query] = await Promise.all([
            send(url, writer, 'GET', `/customers/${writer.customerId}`),
            graphql(url, writer, CUSTOMER_QUERY, { id: writer.customerId }),
          ]);
          readBack('REST customer', rest, (json) => json?.name === name);
          readBack('GraphQL customer', query, (json) => json?.data?.customer?.name === name);
        } else {
          const memo = `Read back ${n} #${k}`;
          const created = await send(url, writer, 'POST', '/invoices', {
            customerId: writer.customerId,
            currency: 'EUR',
            date: '2026-03-31',
            memo,
            items: invoiceItems(k),
          });
          tally().writes++;
          if (created.status !== 201) {
            tally().writeErrors++;
            continue;
          }
          const id = created.json.id as string;
          const [rest, query] = await Promise.all([
            send(url, writer, 'GET', `/invoices/${id}`),
            graphql(url, writer, INVOICE_QUERY, { id }),
          ]);
          readBack('REST invoice', rest, (json) => json?.id === id && json.memo === memo);
          readBack('GraphQL invoice', query, (json) => json?.data?.invoice?.memo === memo);
        }
      }
    };
    // A token that never writes reads the writers' customers: from the replica, however far behind.
    const observeLoop = async () => {
      for (let n = 0; running; n++) {
        const writer = writers[n % writers.length] as Writer;
        const floor = writer.acknowledged;
        const reply = await send(url, observer, 'GET', `/customers/${writer.customerId}`);
        const t = tally();
        t.observed++;
        const seen = Number(/#(\d+)$/.exec(String(reply.json?.name))?.[1] ?? -1);
        if (reply.status !== 200 || seen < floor) t.observedBehind++;
      }
    };
    const lag = async () => {
      const [replay] = await cluster.replicaAdminQuery<{ lsn: string }>(
        'select pg_last_wal_replay_lsn()::text as lsn',
      );
      const [row] = await owner.em
        .getConnection()
        .execute<{ bytes: string }[]>(
          'select pg_wal_lsn_diff(pg_current_wal_lsn(), ?::pg_lsn)::text as bytes',
          [replay?.lsn],
        );
      return Number(row?.bytes ?? 0);
    };

    log(
      `read-your-own-writes: ${settings.writers} writers and one observer, ${settings.phaseSeconds} s per phase`,
    );
    let loops: Promise<void>[] = [];
    let pauseState = '';
    // Where the writers' reads went: the server's counters read at each change of phase and at the end;
    // a phase's tally and its counts both run up to the next change, the last one until the loops stop.
    const boundaries: Record<string, number>[] = [];
    try {
      for (const current of PHASES) {
        if (current === 'replay paused') {
          await cluster.replicaAdminQuery('select pg_wal_replay_pause()');
          const [state] = await cluster.replicaAdminQuery<{ state: string }>(
            'select pg_get_wal_replay_pause_state() as state',
          );
          pauseState = state?.state ?? '';
        }
        if (current === 'replay resumed') await cluster.replicaAdminQuery('select pg_wal_replay_resume()');
        phase = current;
        boundaries.push(await readCounts(replicated));
        if (loops.length === 0) loops = [...writers.map((writer, n) => writeLoop(writer, n)), observeLoop()];
        await new Promise((resolve) => setTimeout(resolve, settings.phaseSeconds * 1000));
        (tallies.get(current) as Tally).lagBytes = await lag();
      }
    } finally {
      running = false;
      await Promise.allSettled(loops);
      await cluster.replicaAdminQuery('select pg_wal_replay_resume()').catch(() => {});
    }
    boundaries.push(await readCounts(replicated));
    for (const [index, current] of PHASES.entries()) {
      const t = tallies.get(current) as Tally;
      t.routed = difference(boundaries[index + 1] ?? {}, boundaries[index] ?? {});
      log(
        `${current}: ${t.writes} writes (${t.writeErrors} failed), ${t.reads} reads back (${t.stale} stale, ${t.readErrors} failed); observer ${t.observed} reads, ${t.observedBehind} behind; reads ${describeCounts(t.routed)}; replica ${t.lagBytes} bytes behind at the end`,
      );
    }
    await cluster.caughtUp(60_000);
    await owner.close();
    const loadAtEnd = loadAverage();

    const all = [...tallies.values()];
    const sum = (pick: (t: Tally) => number) => all.reduce((s, t) => s + pick(t), 0);
    const paused = tallies.get('replay paused') as Tally;
    check(
      sum((t) => t.stale) === 0,
      `a writer's read of its own write, at once, over REST and GraphQL: ${sum((t) => t.stale)} stale of ${sum((t) => t.reads)}${staleExamples.length ? ` (${staleExamples.join('; ')})` : ''}`,
    );
    check(
      sum((t) => t.writeErrors + t.readErrors) === 0,
      `writes and reads answered without failure: ${sum((t) => t.writeErrors)} failed writes of ${sum((t) => t.writes)}, ${sum((t) => t.readErrors)} failed reads`,
    );
    check(
      pauseState === 'paused' && (paused.lagBytes ?? 0) > 0,
      `replay was paused (pg_get_wal_replay_pause_state: ${pauseState}) and the replica ${paused.lagBytes} bytes behind the primary at the end of the pause`,
    );
    check(
      paused.observedBehind > 0,
      `the replica really lagged: the observer token (no writes of its own, so served by the replica) read ${paused.observedBehind} of ${paused.observed} writers' customers older than their acknowledged write during the pause`,
    );
    const toPrimary = rows.map((row) => total(row.routed, 'primary'));
    check(
      rows.every((row) => total(row.routed, 'primary') === 0 && total(row.routed, 'replica') > 0) &&
        total(plainReads, 'replica') === 0,
      `the read scenarios' reads (a token that never wrote) all went to the replica on the replica-enabled server (${toPrimary.join(', ')} to the primary) and none on the other (${describeCounts(plainReads)})`,
    );

    // The report.
    const ms = (value: number) => value.toFixed(2);
    const figure = (measurements: Measurement[], pick: (m: Measurement) => number | null, format = ms) =>
      show(spread(measurements.map(pick)), format);
    const ratio = (row: Row, pick: (m: Measurement) => number | null) =>
      show(
        spread(
          row.replica.map((m, i) => {
            const [a, b] = [pick(m), pick(row.plain[i] as Measurement)];
            return a === null || b === null || b === 0 ? null : a / b;
          }),
        ),
        (value) => `${value.toFixed(2)}×`,
      );
    const tableRows = rows.flatMap((row) =>
      (['plain', 'replica'] as const).map((side) => {
        const m = row[side];
        const routed =
          side === 'plain'
            ? 'primary (no replica)'
            : `${((100 * total(row.routed, 'replica')) / Math.max(1, total(row.routed))).toFixed(0)} % replica (${total(row.routed, 'replica')} / ${total(row.routed)})`;
        return `| ${row.name} | ${side === 'plain' ? 'primary only' : 'with replica'} | ${figure(
          m,
          (x) => x.requestsPerSecond,
          (v) => v.toFixed(0),
        )} | ${figure(
          m,
          (x) => x.p99,
          (v) => v.toFixed(0),
        )} | ${figure(m, (x) => x.cpuMsPerRequest)} | ${figure(m, (x) => x.postgresCpuMsPerRequest)} | ${figure(m, (x) => x.replicaCpuMsPerRequest)} | ${routed} | ${m.reduce((s, x) => s + x.errors, 0)} |`;
      }),
    );
    const phaseRows = PHASES.map((name) => {
      const t = tallies.get(name) as Tally;
      return `| ${name} | ${t.writes} (${t.writeErrors}) | ${t.reads} | **${t.stale}** | ${t.routed['replica/own-write-replayed'] ?? 0} | ${t.routed['primary/own-write-pending'] ?? 0} | ${t.routed['primary/write-attempted'] ?? 0} | ${t.observedBehind} of ${t.observed} | ${t.lagBytes} |`;
    });
    const minutes = ((Date.now() - started) / 60_000).toFixed(1);
    lines.push(
      HEADING,
      '',
      'A PostgreSQL primary (embedded) and a real streaming replica of it (physical replication, `hot_standby`),',
      `both on this machine; the data of \`npm run bench\` (${SEED.customers} customers, ${SEED.invoices} invoices of 3 lines), replayed on the`,
      'replica before anything is measured. Two server processes on the same data, one with',
      '`DATABASE_REPLICA_URLS` (the replica) and one without; job worker, rate limit and query-cost gate off.',
      'Not part of `npm run bench` or `npm test`; it stops by itself (10 minutes at most). How reads are',
      'routed and the read-your-writes rule: docs/scaling.md, "Read replicas".',
      '',
      `### Run (${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${minutes} min)`,
      '',
      `Machine: ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores shared with other work; load average ${loadAtStart} at the start, ${loadAfterReads} after the read runs, ${loadAtEnd} at the end. PostgreSQL ${version}.`,
      '',
      `**Reads.** autocannon, ${settings.connections} connections, ${settings.warmupSeconds} s warm-up + ${settings.seconds} s per scenario and server, ${settings.rounds} rounds (the order of the two servers alternating); median (min–max) over the rounds. CPU per request is user + system time of the server process and of every process of each PostgreSQL (postmaster and children: backends, WAL sender and receiver, replay) over the measured seconds, divided by the requests answered. The bench token never wrote through the API, so the replica-enabled server sends all its reads to the replica; what moves to the replica is the read's transaction (begin, the environment and role settings, the queries, commit). The primary still answers, for every read, the token's read-your-writes fence lookup (one indexed statement outside the transaction, docs/scaling.md) and the token lookup when the token cache has not got it (TOKEN_CACHE_SECONDS): for a read of one row or two that is about as much work for the primary as the read itself; the more a read selects, the more of it leaves the primary.`,
      '',
      '| scenario | server | req/s | p99 ms | server CPU ms/req | primary PG CPU ms/req | replica PG CPU ms/req | reads went to | errors |',
      '|---|---|---|---|---|---|---|---|---|',
      ...tableRows,
      '',
      'With the replica, over the primary alone (round by round). Both PostgreSQL servers, both Node processes and the load generator share the same cores here, so req/s and p99 say little about a deployment where the replica has a machine of its own; the CPU per request is what carries over: what the primary no longer spends, and what the replica-enabled server spends more per read (the fence lookup on the primary, then the transaction on the replica: two connections and one more round trip).',
      '',
      '| scenario | req/s | p99 | server CPU per request | primary PG CPU per request |',
      '|---|---|---|---|---|',
      ...rows.map(
        (row) =>
          `| ${row.name} | ${ratio(row, (m) => m.requestsPerSecond)} | ${ratio(row, (m) => m.p99)} | ${ratio(row, (m) => m.cpuMsPerRequest)} | ${ratio(row, (m) => m.postgresCpuMsPerRequest)} |`,
      ),
      '',
      `**Read-your-own-writes under load.** ${settings.writers} writers, each with a token of its own and a customer of its own, in a loop through the replica-enabled server: PATCH the customer's name, or create an invoice with a unique memo, then at once read it back over REST (GET /customers/{id}, GET /invoices/{id}) and GraphQL (customer(id), invoice(id)), both at the same time; a read that answers anything older than the write is stale. An observer token, which never writes, reads the writers' customers meanwhile (from the replica: it may see them late, which is allowed, and shows that the replica really lagged). ${settings.phaseSeconds} s per phase: replay running, replay paused (\`pg_wal_replay_pause()\` on the replica), replay resumed. Reads counted by the server's \`db_read_transactions_total\` (writers' reads only: the observer's are \`replica/no-own-write\`).`,
      '',
      "| phase | writes (failed) | reads back | stale | writers' reads on the replica | on the primary (own write pending) | re-run on the primary | observer reads behind | replica behind at the end, bytes |",
      '|---|---|---|---|---|---|---|---|---|',
      ...phaseRows,
      '',
      'Checks:',
      '',
      ...checkLines,
    );
  } finally {
    await cleanup();
  }
  const section = lines.join('\n');
  log(`\n${section}`);
  if (settings.writeResults && section) {
    await writeSection(section);
    log(`\nwritten to ${path.relative(process.cwd(), RESULTS)}`);
  }
}

await runBounded('bench:replica', HARD_LIMIT_MS, main, () => cleanup(), failures);
