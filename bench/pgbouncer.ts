/**
 * `npm run bench:pgbouncer`: three server processes through PgBouncer in transaction pooling on one
 * PostgreSQL (the embedded one), started at once on a fresh database with MIGRATE_ON_START. Drives
 * REST and GraphQL traffic (creating and booking invoices) through all three, and billing runs (two
 * asked for through GraphQL at once, and a scheduled one as the job worker runs it), then checks: no
 * 5xx, gapless invoice numbers, no connection left with a role, setting or advisory lock. Loopback only,
 * bounded (BENCH_SECONDS of traffic, 15 by default). Needs Debian's pgbouncer (apt-get install pgbouncer).
 */
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JobHelpers } from 'graphile-worker';
import pg from 'pg';
import { pino } from 'pino';
import { AccessService } from '../src/auth/access.service.ts';
import { freePort, startEmbeddedDatabase } from '../src/db/embedded.ts';
import { openOrm } from '../src/db/orm.ts';
import { BILLING_RUN_TASK, billingTasks } from '../src/modules/billing/billing.jobs.ts';
import { entities } from '../src/modules/registry.ts';
import { type Child, startChild, startFlags } from './child.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const CONCURRENCY = 6;
const PGBOUNCER = '/usr/sbin/pgbouncer';

const log = (message: string) => console.log(`[pgbouncer] ${message}`);

async function startPgBouncer(dir: string, server: URL): Promise<{ url: string; stop: () => void }> {
  const port = await freePort();
  const user = decodeURIComponent(server.username);
  await writeFile(path.join(dir, 'users.txt'), `"${user}" ""\n`);
  await writeFile(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=127.0.0.1 port=${server.port} user=${user} password=${decodeURIComponent(server.password)}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'default_pool_size = 12',
      'max_client_conn = 200',
      'ignore_startup_parameters = extra_float_digits',
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
    ].join('\n'),
  );
  await chmod(dir, 0o777);
  // PgBouncer refuses to run as root.
  const asRoot = process.getuid?.() === 0;
  const child = spawn(
    asRoot ? 'runuser' : PGBOUNCER,
    asRoot
      ? ['-u', 'postgres', '--', PGBOUNCER, path.join(dir, 'pgbouncer.ini')]
      : [path.join(dir, 'pgbouncer.ini')],
    { stdio: 'ignore' },
  );
  const url = new URL(server);
  url.port = String(port);
  for (let i = 0; i < 100; i += 1) {
    const client = new pg.Client({ connectionString: url.toString() });
    try {
      await client.connect();
      await client.end();
      return { url: url.toString(), stop: () => child.kill('SIGTERM') };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  child.kill('SIGTERM');
  throw new Error('PgBouncer did not accept connections');
}

type Tally = { requests: number; byStatus: Map<number, number>; errors: string[] };

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'billing-pgbouncer-'));
  await chmod(dir, 0o755);
  log('starting the embedded PostgreSQL');
  const database = await startEmbeddedDatabase(path.join(dir, 'pg'));
  const direct = new URL(database.url);
  const pgbouncer = await startPgBouncer(path.join(dir), direct);
  log(`PgBouncer in transaction mode on port ${new URL(pgbouncer.url).port}`);
  const children: Child[] = [];
  try {
    const flags = await startFlags();
    const env = {
      DATABASE_URL: pgbouncer.url,
      DATABASE_SESSION_URL: database.url,
      DB_PREPARED_STATEMENTS: 'false',
      MIGRATE_ON_START: 'true',
      JOB_WORKER: 'false',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      RATE_LIMIT_REQUESTS: '0',
      QUERY_COST_PER_SECOND: '0',
    };
    log('starting 3 servers at once on the fresh database (each migrates)');
    children.push(
      ...(await Promise.all(
        [1, 2, 3].map(() => startChild([...flags, path.join(HERE, '..', 'src', 'main.ts')], env, '/health')),
      )),
    );

    const owner = await openOrm(database.url, { entities, poolMax: 2, owner: true });
    const access = new AccessService(owner.em.fork());
    const environment = await access.createEnvironment('PgBouncer');
    const { secret } = await access.createToken([environment.id], 'bench');
    await owner.close();
    const headers = {
      authorization: `Bearer ${secret}`,
      'x-environment': environment.id,
      'content-type': 'application/json',
    };
    const tally: Tally = { requests: 0, byStatus: new Map(), errors: [] };
    const call = async (n: number, method: string, url: string, body?: unknown) => {
      const base = children[n % children.length]?.url as string;
      const response = await fetch(`${base}${url}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      tally.requests += 1;
      tally.byStatus.set(response.status, (tally.byStatus.get(response.status) ?? 0) + 1);
      if (response.status >= 500 && tally.errors.length < 5) tally.errors.push(`${method} ${url}: ${text}`);
      return { status: response.status, body: text ? JSON.parse(text) : null };
    };
    const gql = (n: number, query: string, variables: Record<string, unknown> = {}) =>
      call(n, 'POST', '/graphql', { query, variables });

    // A product, price and customers with subscriptions, for the billing runs.
    const product = await gql(0, 'mutation { productCreate(input: { name: "Seats" }) { product { id } } }');
    const price = await gql(
      1,
      'mutation ($input: PriceCreateInput!) { priceCreate(input: $input) { price { id } userErrors { message } } }',
      {
        input: {
          name: 'Monthly',
          termUnit: 'month',
          termCount: 1,
          purchase: 'recurring',
          priceModel: 'fee',
          method: 'advance',
          pricing: { eur: { amount: 1000 } },
        },
      },
    );
    if (!price.body.data?.priceCreate?.price) throw new Error(`priceCreate: ${JSON.stringify(price.body)}`);
    const productId = product.body.data.productCreate.product.id;
    const priceId = price.body.data.priceCreate.price.id;
    for (let i = 0; i < 12; i += 1) {
      const customer = await call(i, 'POST', '/customers', { name: `Sub ${i}`, currency: 'EUR' });
      await gql(
        i,
        `mutation ($input: SubscriptionCreateInput!) { subscriptionCreate(input: $input) { userErrors { message } } }`,
        {
          input: {
            customerId: customer.body.id,
            term: { start: '2026-01-01' },
            items: [{ productId, priceId }],
          },
        },
      );
    }

    log(`traffic for ${SECONDS} s: ${CONCURRENCY} clients over 3 servers (REST, GraphQL, bookings)`);
    const deadline = Date.now() + SECONDS * 1000;
    let booked = 0;
    const started = Date.now();
    const client = async (worker: number) => {
      for (let n = worker; Date.now() < deadline; n += CONCURRENCY) {
        const customer = await call(n, 'POST', '/customers', { name: `Customer ${n}`, currency: 'EUR' });
        await call(n + 1, 'GET', `/customers/${customer.body.id}`);
        const invoice = await call(n + 2, 'POST', '/invoices', {
          customerId: customer.body.id,
          currency: 'EUR',
          date: '2026-03-31',
          dueDate: null,
          items: [{ quantity: 3, unitAmount: 1250, title: 'Seats' }],
        });
        if (invoice.status === 201) {
          const book = await gql(
            n,
            'mutation ($id: UUID!) { invoiceBook(id: $id) { userErrors { message } } }',
            {
              id: invoice.body.id,
            },
          );
          if (book.body?.data?.invoiceBook?.userErrors?.length === 0) booked += 1;
        }
        await gql(
          n + 1,
          '{ invoices(first: 20) { edges { node { id handle customerId customer { name } items { id } } } } }',
        );
      }
    };
    const run = `mutation { billingRunCreate { billingRun { id status invoiceCount } userErrors { code } } }`;
    const [billing] = await Promise.all([
      (async () => {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        return Promise.all([gql(0, run), gql(1, run)]);
      })(),
      ...Array.from({ length: CONCURRENCY }, (_, worker) => client(worker)),
    ]);
    const seconds = (Date.now() - started) / 1000;

    // The scheduled run, as the job worker runs it, through PgBouncer.
    const orm = await openOrm(pgbouncer.url, { entities, poolMax: 4, preparedStatements: false });
    const helpers = { abortSignal: undefined, addJob: async () => {} } as unknown as JobHelpers;
    await billingTasks({
      orm,
      logger: pino({ level: 'warn' }),
      settings: { eventRetentionDays: 30, mail: null },
      eventListeners: [],
    })[BILLING_RUN_TASK]?.({ environmentId: environment.id }, helpers);
    await orm.close();

    // Checks, on a direct connection.
    const check = new pg.Client({ connectionString: database.url });
    await check.connect();
    const numbers = await check.query<{ handle: string }>(
      `select handle from invoice where environment_id = $1 and status <> 'draft' order by handle`,
      [environment.id],
    );
    const digits = numbers.rows.map((row) => Number(/(\d+)$/.exec(row.handle)?.[1])).sort((a, b) => a - b);
    const gapless = digits.every((value, index) => value === (digits[0] ?? 1) + index);
    const roles = await check.query<{ count: number }>(
      `select count(*)::int as count from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`,
    );
    const locks = await check.query<{ count: number }>(
      `select count(*)::int as count from pg_locks where locktype = 'advisory'`,
    );
    await check.end();
    // Every server connection PgBouncer holds, as it would hand it to the next client.
    const sessions = new Map<string, number>();
    const probes = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const probe = new pg.Client({ connectionString: pgbouncer.url });
        await probe.connect();
        await probe.query('begin');
        return probe;
      }),
    );
    for (const probe of probes) {
      const { rows } = await probe.query<{ role: string; env: string; prepared: number; advisory: number }>(
        `select current_setting('role') as role, coalesce(current_setting('app.environment_id', true), '') as env,
          (select count(*)::int from pg_prepared_statements) as prepared,
          (select count(*)::int from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()) as advisory`,
      );
      const key = JSON.stringify(rows[0]);
      sessions.set(key, (sessions.get(key) ?? 0) + 1);
    }
    for (const probe of probes) {
      await probe.query('rollback');
      await probe.end();
    }

    const fivexx = [...tally.byStatus].filter(([status]) => status >= 500).reduce((sum, [, n]) => sum + n, 0);
    const statuses = [...tally.byStatus]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ');
    const runs = billing.map((answer) => JSON.stringify(answer.body?.data?.billingRunCreate ?? answer.body));
    const results = [
      `requests: ${tally.requests} in ${seconds.toFixed(1)} s (${(tally.requests / seconds).toFixed(0)} req/s over 3 servers); statuses ${statuses}`,
      `5xx: ${fivexx}${tally.errors.length ? ` (first: ${tally.errors.join(' | ')})` : ''}`,
      `invoices booked by the traffic: ${booked}; numbered invoices: ${digits.length}, gapless: ${gapless}`,
      `billingRunCreate twice at once: ${runs.join(' ; ')}`,
      `server connections seen through PgBouncer (role, environment, named statements, advisory locks): ${[...sessions].map(([k, n]) => `${n}× ${k}`).join(', ')}`,
      `other client backends still connected: ${roles.rows[0]?.count}; advisory locks held at the end: ${locks.rows[0]?.count}`,
    ];
    for (const line of results) log(line);
    const clean = [...sessions.keys()].every(
      (key) => key === JSON.stringify({ role: 'none', env: '', prepared: 0, advisory: 0 }),
    );
    const ok = fivexx === 0 && gapless && clean && locks.rows[0]?.count === 0;
    log(ok ? 'PASS' : 'FAIL');
    process.exitCode = ok ? 0 : 1;
  } finally {
    for (const child of children) child.process.kill('SIGTERM');
    await Promise.all(
      children.map((child) =>
        child.process.exitCode === null
          ? new Promise((resolve) => child.process.once('exit', resolve))
          : null,
      ),
    );
    pgbouncer.stop();
    await database.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
