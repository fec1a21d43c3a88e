/**
 * `npm run bench:multiprocess`: three server processes behind nginx on one PostgreSQL, against one.
 *
 * Starts an embedded PostgreSQL in a temporary directory, migrates and seeds it (bench/seed.ts), then:
 * 1. throughput: the scenarios of `npm run bench` (bench/scenarios.ts) against one server process
 *    directly, then against three behind nginx (round robin, keep-alive to the upstreams), and the
 *    ratio 3 : 1;
 * 2. results: with a rate limit on, through nginx or at each process directly: concurrent bookings get
 *    gapless numbers, a billing run asked of all three at once bills each period once, the rate limit
 *    is shared by the three, an Idempotency-Key answers alike whichever process a retry reaches.
 * Prints a Markdown section (for bench/RESULTS.md) and exits non-zero when a result check fails.
 *
 * Needs nginx on PATH (Debian: apt-get install nginx-light). Settings (environment): BENCH_SECONDS (6),
 * BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (30).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AccessService } from '../src/auth/access.service.ts';
import { freePort, startEmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate, openOrm } from '../src/db/orm.ts';
import { entities } from '../src/modules/registry.ts';
import { type Child, checkRecorder, runBounded, startChild, startFlags, stopChild } from './child.ts';
import { type Measurement, measure } from './load.ts';
import { scenarios } from './scenarios.ts';
import { seed } from './seed.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const settings = {
  seconds: Number(process.env.BENCH_SECONDS ?? 6),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 2),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 30),
};
/** The whole script stops (and cleans up) after this long, whatever it is doing. */
const HARD_LIMIT_MS = 15 * 60_000;
const RATE_LIMIT = 150;
const BOOKING_CONCURRENCY = 12;
const log = (message: string) => process.stdout.write(`${message}\n`);
const { check, lines: checkLines, failures } = checkRecorder();
/** Stops whatever runs (servers, nginx, PostgreSQL); set once they are started. */
let cleanup: () => Promise<void> = async () => {};

type Env = { id: string; headers: Record<string, string> };

async function send(base: string, env: Env, method: string, pathname: string, body?: unknown, extra = {}) {
  const response = await fetch(`${base}${pathname}`, {
    method,
    headers: {
      ...env.headers,
      ...extra,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: text ? JSON.parse(text) : undefined,
  };
}

const graphql = (base: string, env: Env, query: string, variables: Record<string, unknown> = {}) =>
  send(base, env, 'POST', '/graphql', { query, variables });

async function startNginx(dir: string, upstreams: string[]): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  await mkdir(path.join(dir, 'temp'), { recursive: true });
  await chmod(path.join(dir, 'temp'), 0o777);
  const servers = upstreams.map((url) => `server ${new URL(url).host};`).join(' ');
  const temp = path.join(dir, 'temp');
  await writeFile(
    path.join(dir, 'nginx.conf'),
    `worker_processes 1;
daemon off;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${temp}/body; proxy_temp_path ${temp}/proxy; fastcgi_temp_path ${temp}/fastcgi;
  uwsgi_temp_path ${temp}/uwsgi; scgi_temp_path ${temp}/scgi;
  upstream app { ${servers} keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_next_upstream off;
    }
  }
}
`,
  );
  const child = spawn('nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf')], { stdio: 'inherit' });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}`);
    try {
      await fetch(`${url}/health`);
      return { url, process: child };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error('nginx did not answer');
}

async function stopNginx(nginx: { process: ChildProcess } | undefined): Promise<void> {
  if (!nginx || nginx.process.exitCode !== null) return;
  const exited = once(nginx.process, 'exit');
  nginx.process.kill('SIGQUIT');
  await exited;
}

function machine(): string {
  const load = os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
  return `${os.cpus()[0]?.model ?? 'unknown CPU'}, ${os.cpus().length} cores, load average ${load}`;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'billing-multiprocess-'));
  await chmod(dataDir, 0o755);
  log('starting the embedded PostgreSQL, migrating and seeding');
  const database = await startEmbeddedDatabase(dataDir);
  const children: Child[] = [];
  let nginx: Awaited<ReturnType<typeof startNginx>> | undefined;
  const flags = await startFlags();
  const main = path.join(HERE, '..', 'src', 'main.ts');
  // One after the other, each kept as soon as it answers: on a loaded machine three starting at once
  // can each take longer than startChild waits, and one that failed must not leave the others running.
  const startServers = async (count: number, env: Record<string, string>) => {
    const started: Child[] = [];
    for (let n = 0; n < count; n++) {
      const child = await startChild(
        [...flags, main],
        {
          DATABASE_URL: database.url,
          MIGRATE_ON_START: 'false',
          JOB_WORKER: 'false',
          LOG_LEVEL: 'warn',
          NODE_ENV: 'production',
          QUERY_COST_PER_SECOND: '0',
          ...env,
        },
        '/health',
      );
      children.push(child);
      started.push(child);
    }
    return started;
  };
  const stopServers = async () => {
    await stopNginx(nginx);
    nginx = undefined;
    await Promise.all(children.splice(0).map((child) => stopChild(child)));
  };
  cleanup = async () => {
    await stopServers();
    await database.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
  const lines: string[] = [];
  try {
    const owner = await openOrm(database.url, { entities, poolMax: 2, owner: true });
    await migrate(owner);
    const data = await seed(owner);
    const access = new AccessService(owner.em.fork());
    const token = async (name: string): Promise<Env> => {
      const id = data.environmentId;
      const { secret } = await access.createToken([id], name);
      return { id, headers: { authorization: `Bearer ${secret}`, 'x-environment': id } };
    };
    const sql = async <R>(query: string, params: unknown[] = []) =>
      owner.em.getConnection().execute<R[]>(query, params);

    // 1. Throughput: one process, then three behind nginx.
    const list = scenarios(data);
    const results: { name: string; one: Measurement; three: Measurement }[] = [];
    const loadAtStart = machine();
    const [single] = await startServers(1, { RATE_LIMIT_REQUESTS: '0' });
    const one = new Map<string, Measurement>();
    for (const scenario of list) {
      const m = await measure(
        single?.url as string,
        { server: single?.process.pid as number, postgres: null },
        scenario,
        settings,
      );
      one.set(scenario.name, m);
      log(
        `1 process   ${scenario.name.padEnd(30)} ${m.requestsPerSecond.toFixed(0).padStart(6)} req/s  p99 ${m.p99} ms  errors ${m.errors}`,
      );
    }
    await stopServers();
    const three = await startServers(3, { RATE_LIMIT_REQUESTS: '0' });
    nginx = await startNginx(
      path.join(dataDir, 'nginx'),
      three.map((child) => child.url),
    );
    for (const scenario of list) {
      const m = await measure(
        nginx.url,
        { server: three[0]?.process.pid as number, postgres: null },
        scenario,
        settings,
      );
      results.push({ name: scenario.name, one: one.get(scenario.name) as Measurement, three: m });
      log(
        `3 processes ${scenario.name.padEnd(30)} ${m.requestsPerSecond.toFixed(0).padStart(6)} req/s  p99 ${m.p99} ms  errors ${m.errors}`,
      );
    }
    const loadAfter = machine();
    await stopServers();

    // 2. Results: the same whichever process answers.
    // A long execution limit: on a loaded machine a billing run or a queue of bookings outlasts the
    // default 10 s, and a request rolled back for its time proves nothing about several processes.
    const servers = await startServers(3, {
      RATE_LIMIT_REQUESTS: String(RATE_LIMIT),
      RATE_LIMIT_WINDOW_SECONDS: '3600',
      EXECUTION_TIMEOUT_MS: '120000',
    });
    nginx = await startNginx(
      path.join(dataDir, 'nginx'),
      servers.map((child) => child.url),
    );
    const via = nginx.url;

    // Gapless numbers: every seeded draft booked at once, spread over the three processes.
    const drafts = await sql<{ id: string }>(
      `select id from invoice where environment_id = ? and status = 'draft' order by id limit 120`,
      [data.environmentId],
    );
    const booker = await token('bookings');
    const book = (id: string) =>
      graphql(via, booker, 'mutation ($id: UUID!) { invoiceBook(id: $id) { userErrors { message } } }', {
        id,
      });
    const booked: Awaited<ReturnType<typeof send>>[] = [];
    for (let n = 0; n < drafts.length; n += BOOKING_CONCURRENCY) {
      booked.push(...(await Promise.all(drafts.slice(n, n + BOOKING_CONCURRENCY).map(({ id }) => book(id)))));
    }
    const bookingFailures = booked.filter(
      (r) => r.status !== 200 || r.json.errors || r.json.data.invoiceBook.userErrors.length > 0,
    );
    check(
      bookingFailures.length === 0,
      `${drafts.length} bookings through nginx, ${BOOKING_CONCURRENCY} at a time, all succeeded` +
        (bookingFailures[0] ? ` (first failure: ${bookingFailures[0].text.slice(0, 200)})` : ''),
    );
    const handles = await sql<{ handle: string }>(
      `select handle from invoice where environment_id = ? and status <> 'draft' and type = 'invoice' and handle is not null`,
      [data.environmentId],
    );
    const numbers = handles.map((row) => Number(/(\d+)$/.exec(row.handle)?.[1])).sort((a, b) => a - b);
    const gapless = numbers.every((n, i) => n === (numbers[0] as number) + i);
    check(
      gapless && new Set(numbers).size === numbers.length,
      `${numbers.length} invoice numbers are gapless and distinct (${numbers[0]}..${numbers.at(-1)})`,
    );

    // Exactly-once billing: the same run asked of each process at once.
    const biller = await token('billing');
    const created = async (query: string, field: string, key: string) => {
      const reply = await graphql(via, biller, query);
      const id = reply.json?.data?.[field]?.[key]?.id;
      if (!id) throw new Error(`${field}: ${reply.text}`);
      return id as string;
    };
    const product = await created(
      'mutation { productCreate(input: { name: "Seats", handle: "mp-seats" }) { product { id } } }',
      'productCreate',
      'product',
    );
    const price = await created(
      'mutation { priceCreate(input: { name: "Seat", termUnit: month, termCount: 1, purchase: recurring, priceModel: fee, method: advance, pricing: { eur: { amount: 1000 } } }) { price { id } } }',
      'priceCreate',
      'price',
    );
    const subscriptions = 20;
    for (let n = 0; n < subscriptions; n++) {
      const customerId = await created(
        `mutation { customerCreate(input: { name: "Sub ${n}", currency: "EUR" }) { customer { id } } }`,
        'customerCreate',
        'customer',
      );
      const reply = await graphql(
        via,
        biller,
        'mutation ($input: SubscriptionCreateInput!) { subscriptionCreate(input: $input) { userErrors { message } } }',
        {
          input: {
            customerId,
            term: { start: '2026-01-01' },
            items: [{ productId: product, priceId: price, quantity: 1 }],
          },
        },
      );
      if (reply.json?.errors || reply.json?.data?.subscriptionCreate?.userErrors?.length)
        throw new Error(reply.text);
    }
    const runs = await Promise.all(
      servers.map((server) =>
        graphql(
          server.url,
          biller,
          'mutation { billingRunCreate(asOf: "2026-03-01T00:00:00Z") { billingRun { invoiceCount periodCount } userErrors { message } } }',
        ),
      ),
    );
    const [billed] = await sql<{ invoices: number; customers: number; periods: number }>(
      `select count(*)::int as invoices, count(distinct i.customer_id)::int as customers,
         (select count(*)::int from billed_period p where p.environment_id = ?) as periods
       from invoice i join customer c on c.id = i.customer_id
       where i.environment_id = ? and c.name like 'Sub %'`,
      [data.environmentId, data.environmentId],
    );
    const invoiceCounts = runs.map(
      (r) =>
        r.json?.data?.billingRunCreate?.billingRun?.invoiceCount ??
        r.json?.data?.billingRunCreate?.userErrors?.[0]?.message ??
        r.json?.errors?.[0]?.message ??
        r.status,
    );
    check(
      billed?.invoices === subscriptions && billed.customers === subscriptions,
      `billing run asked of 3 processes at once: ${billed?.invoices} invoices for ${subscriptions} subscriptions (${billed?.customers} customers), ${billed?.periods} periods billed; the three answered ${JSON.stringify(invoiceCounts)}`,
    );

    // The shared rate limit: a fresh token sends 1.5 times its budget, round robin over the three.
    const limited = await token('rate limit');
    const statuses: number[] = [];
    for (let n = 0; n < RATE_LIMIT * 1.5; n += 25) {
      statuses.push(
        ...(
          await Promise.all(Array.from({ length: 25 }, () => send(via, limited, 'GET', '/customers?limit=1')))
        ).map((r) => r.status),
      );
    }
    const admitted = statuses.filter((s) => s === 200).length;
    const refused = statuses.filter((s) => s === 429).length;
    check(
      admitted === RATE_LIMIT && refused === statuses.length - RATE_LIMIT,
      `rate limit ${RATE_LIMIT} per window over 3 processes: ${admitted} admitted, ${refused} refused of ${statuses.length}`,
    );

    // Idempotency: one key sent to each process in turn, and another to all three at once.
    const idem = await token('idempotency');
    const body = {
      customerId: data.customerIds[0],
      currency: 'EUR',
      date: '2026-03-31',
      items: [{ quantity: 1, unitAmount: 100, title: 'Once' }],
    };
    const inTurn: Awaited<ReturnType<typeof send>>[] = [];
    for (const server of servers)
      inTurn.push(
        await send(server.url, idem, 'POST', '/invoices', body, { 'idempotency-key': 'mp-in-turn' }),
      );
    check(
      inTurn.every((r) => r.status === 201 && r.text === inTurn[0]?.text) &&
        inTurn.slice(1).every((r) => r.headers.get('idempotent-replayed') === 'true'),
      `one Idempotency-Key sent to each of 3 processes in turn: ${inTurn.map((r) => r.status).join(', ')}, identical bodies, replays marked`,
    );
    const atOnce = await Promise.all(
      servers.map((server) =>
        send(server.url, idem, 'POST', '/invoices', body, { 'idempotency-key': 'mp-at-once' }),
      ),
    );
    // Then a retry at each process in turn (retries at once would wait for each other's lock: 409).
    const again: Awaited<ReturnType<typeof send>>[] = [];
    for (const server of servers) {
      again.push(
        await send(server.url, idem, 'POST', '/invoices', body, { 'idempotency-key': 'mp-at-once' }),
      );
    }
    const answered = [...atOnce, ...again].filter((r) => r.status === 201);
    const [count] = await sql<{ n: number }>(
      `select count(*)::int as n from invoice where environment_id = ? and customer_id = ? and total_excl_vat = 100`,
      [data.environmentId, data.customerIds[0]],
    );
    check(
      answered.every((r) => JSON.parse(r.text).id === JSON.parse(answered[0]?.text ?? '{}').id) &&
        again.every((r) => r.status === 201) &&
        count?.n === 2,
      `one Idempotency-Key sent to 3 processes at once: ${atOnce.map((r) => r.status).join(', ')} (409: in flight elsewhere), then in turn ${again.map((r) => r.status).join(', ')}, one invoice id; invoices stored for the two keys: ${count?.n}`,
    );

    lines.push(
      `### Three processes behind nginx (${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC)`,
      '',
      `Machine: ${loadAtStart} at the start, ${loadAfter} after the throughput runs. autocannon, ${settings.connections} connections, ${settings.warmupSeconds} s warm-up + ${settings.seconds} s per scenario; one process straight, three behind nginx (round robin, keep-alive upstreams); one embedded PostgreSQL, DB_POOL_MAX 10 per process, rate limit off.`,
      '',
      '| scenario | 1 process req/s (p99) | 3 processes req/s (p99) | 3 : 1 | errors |',
      '|---|---|---|---|---|',
      ...results.map(
        (r) =>
          `| ${r.name} | ${r.one.requestsPerSecond.toFixed(0)} (${r.one.p99} ms) | ${r.three.requestsPerSecond.toFixed(0)} (${r.three.p99} ms) | ${(r.three.requestsPerSecond / r.one.requestsPerSecond).toFixed(2)}× | ${r.one.errors} / ${r.three.errors} |`,
      ),
      '',
      'Results through three processes:',
      '',
      ...checkLines,
    );
  } finally {
    await cleanup();
  }
  log(`\n${lines.join('\n')}`);
}

await runBounded('bench:multiprocess', HARD_LIMIT_MS, main, () => cleanup(), failures);
