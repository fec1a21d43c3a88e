/*
 * Billing at volume: `npm run bench:billing -- [sizes]` (default 1000,10000,100000; comma-separated).
 * Starts its own embedded PostgreSQL in a temporary directory. For each size, a fresh environment gets
 * one template customer with a subscription of two monthly items (advance and arrears, started three
 * months before `asOf`) through GraphQL, cloned N-1 times in SQL as the tables' owner (customer,
 * subscription, subscription_item and their event and audit_event rows: every row customerCreate and
 * subscriptionCreate write; BENCH_QUERIES=1 lists the template's tables and the statements per customer). Then one billing run as the job queue runs it for big environments: BillingRunService.run
 * on a job context, outside any request (a GraphQL billingRunCreate is one transaction under the
 * request's execution deadline, EXECUTION_TIMEOUT_MS, 10 s by default). Checks that every customer got
 * exactly one invoice, that the clones' totals equal the template's and that the numbers are gapless,
 * and prints seconds, invoices per hour, ms per invoice (wall, and the CPU of Node and of PostgreSQL) and the curve (ms per invoice relative to the
 * smallest size: a linear run stays near 1). BENCH_BATCH=n bills n customers per transaction instead of
 * the run's default (BILLING_BATCH); BILLING_CONCURRENCY=n bills n batches at once (the server's setting,
 * default 1). BILLING_PROCESSES=n splits each run over n processes: this one leads it, and n-1 job workers
 * (`npm run worker`, started once, one job at a time each) take the `billing-run-help` jobs the run asks
 * for, as a server's scheduled run does with BILLING_HELPERS; Node's CPU is then all n processes', and the
 * checks add that the run's counts cover every customer and say how many each process billed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { makeWorkerUtils, type WorkerUtils } from 'graphile-worker';
import pg from 'pg';
import { pino } from 'pino';
import { createApp } from '../src/app.ts';
import { AccessService } from '../src/auth/access.service.ts';
import { loadConfig } from '../src/config.ts';
import { createJobContext } from '../src/context.ts';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate, openOrm } from '../src/db/orm.ts';
import { inviteHelpers } from '../src/modules/billing/billing.jobs.ts';
import { BillingRunService } from '../src/modules/billing/billing-run.service.ts';
import { entities } from '../src/modules/registry.ts';
import { startFlags } from './child.ts';
import { createdId, graphqlCaller } from './graphql-client.ts';
import { cpuOf, postgresCpu, postmasterOf } from './proc-cpu.ts';

const sizes = (process.argv[2] ?? '1000,10000,100000').split(',').map(Number);
const asOf = new Date('2026-03-01T00:00:00Z');
const dataDir = await mkdtemp(path.join(tmpdir(), 'billing-volume-'));
await chmod(dataDir, 0o755);
const database = await startEmbeddedDatabase(dataDir);
const postmaster = await postmasterOf(dataDir);
const owner = await openOrm(database.url, { entities, poolMax: 1, owner: true });
const orm = await openOrm(database.url, { entities, poolMax: 10 });
const sql = new pg.Client({ connectionString: database.url });
await sql.connect();

/** The job workers that help each run (BILLING_PROCESSES - 1), and what each has printed. */
const processes = Math.max(1, Number(process.env.BILLING_PROCESSES ?? 1));
const helpers: { child: ChildProcess; output: string }[] = [];
let jobs: WorkerUtils | null = null;

/** Starts the helpers' workers on the migrated database, and waits until each says it runs. */
async function startHelpers(): Promise<void> {
  const workerScript = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'src', 'worker.ts');
  for (let n = 1; n < processes; n++) {
    const child = spawn(process.execPath, [...(await startFlags()), workerScript], {
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        BILLING_RUN_SCHEDULE: 'off',
        JOB_CONCURRENCY: '1',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const helper = { child, output: '' };
    child.stdout?.on('data', (chunk) => (helper.output += chunk));
    child.stderr?.on('data', (chunk) => (helper.output += chunk));
    helpers.push(helper);
  }
  for (let tries = 0; helpers.some(({ output }) => !output.includes('job worker running')); tries++) {
    const gone = helpers.find(({ child }) => child.exitCode !== null);
    if (gone || tries > 600)
      throw new Error(`a helper's worker did not start:\n${(gone ?? helpers[0])?.output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (helpers.length > 0) jobs = await makeWorkerUtils({ connectionString: database.url });
}

/** The customers each helper said it billed of run `runId` (its `billing run help finished` log line). */
function helpedBy(runId: string): number[] {
  return helpers.map(({ output }) => {
    const line = output
      .split('\n')
      .find((text) => text.includes('"billing run help finished"') && text.includes(runId));
    return line ? Number(JSON.parse(line).customersDone) : 0;
  });
}

/** CPU (ms) of the helpers' processes. */
async function helpersCpu(): Promise<number> {
  const cpus = await Promise.all(helpers.map(({ child }) => cpuOf(child.pid as number)));
  return cpus.reduce((sum, cpu) => sum + (cpu ? cpu.user + cpu.system : 0), 0);
}

/** A time-ordered (v7) UUID made in SQL from a millisecond timestamp, as the application's ids are. */
await sql.query(`create function pg_temp.bench_uuid7(ms bigint) returns uuid language sql as $$
  select encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
    placing substring(int8send(ms) from 3) from 1 for 6), 52, 1), 53, 1), 'hex')::uuid $$`);

/** The columns of a table, in order. */
async function columns(table: string): Promise<string[]> {
  const { rows } = await sql.query<{ column_name: string }>(
    `select column_name from information_schema.columns where table_schema = 'public' and table_name = $1
     order by ordinal_position`,
    [table],
  );
  return rows.map((row) => `"${row.column_name}"`);
}

/** `insert into table select …` with some columns replaced by expressions over the clone map `m`. */
async function cloneRows(
  table: string,
  alias: string,
  replace: Record<string, string>,
  where: string,
  from = 'clone m',
) {
  const cols = await columns(table);
  const exprs = cols.map((col) => replace[col.replaceAll('"', '')] ?? `${alias}.${col}`);
  const result = await sql.query(
    `insert into ${table} (${cols.join(', ')}) select ${exprs.join(', ')} from ${table} ${alias}, ${from} where ${where}`,
  );
  return result.rowCount ?? 0;
}

async function measure(customers: number) {
  const access = new AccessService(owner.em.fork());
  const environment = await access.createEnvironment(`Bench ${customers}`);
  const { secret } = await access.createToken([environment.id]);
  const app = createApp({ orm, logger: pino({ level: 'silent' }) });
  const graphql = graphqlCaller(app, environment.id, secret);
  const product = createdId(
    await graphql('mutation { productCreate(input: { name: "Seats", handle: "seats" }) { product { id } } }'),
    'productCreate',
    'product',
  );
  const price = async (method: string) =>
    createdId(
      await graphql(
        `mutation ($method: BillingMethod!) { priceCreate(input: { name: "Seat", termUnit: month, termCount: 1,
          purchase: recurring, priceModel: fee, method: $method, pricing: { eur: { amount: 1000 } } }) { price { id } } }`,
        { method },
      ),
      'priceCreate',
      'price',
    );
  const [advance, arrears] = [await price('advance'), await price('arrears')];
  const customerId = createdId(
    await graphql(
      'mutation { customerCreate(input: { name: "Customer", currency: "EUR" }) { customer { id } } }',
    ),
    'customerCreate',
    'customer',
  );
  const subscriptionId = createdId(
    await graphql(
      `mutation ($input: SubscriptionCreateInput!) { subscriptionCreate(input: $input) { subscription { id } userErrors { message } } }`,
      {
        input: {
          customerId,
          term: { start: '2026-01-01' },
          items: [
            { productId: product, priceId: advance, quantity: 3 },
            { productId: product, priceId: arrears, quantity: 2 },
          ],
        },
      },
    ),
    'subscriptionCreate',
    'subscription',
  );

  if (process.env.BENCH_QUERIES) {
    // Which tables the template's creation wrote in the environment: the clone must cover them.
    const { rows: tables } = await sql.query<{ table_name: string }>(
      `select table_name from information_schema.columns where table_schema = 'public' and column_name = 'environment_id'`,
    );
    await sql.query('begin');
    await sql.query(`select set_config('app.environment_id', $1, true)`, [environment.id]);
    for (const { table_name: table } of tables) {
      const { rows: counted } = await sql.query<{ n: number }>(
        `select count(*)::int as n from ${table} where environment_id = $1`,
        [environment.id],
      );
      if ((counted[0]?.n ?? 0) > 0) console.error(`template rows: ${table} ${counted[0]?.n}`);
    }
    await sql.query('commit');
  }
  // The clones, in SQL as the owner (row-level security is forced, so the session names the environment).
  const seedStarted = process.hrtime.bigint();
  await sql.query('begin');
  await sql.query(`select set_config('app.environment_id', $1, true)`, [environment.id]);
  await sql.query('drop table if exists clone');
  await sql.query(
    `create temp table clone on commit drop as
     select g, pg_temp.bench_uuid7(floor(extract(epoch from clock_timestamp()) * 1000)::bigint + g) as customer_id,
            pg_temp.bench_uuid7(floor(extract(epoch from clock_timestamp()) * 1000)::bigint + g) as subscription_id
     from generate_series(1, $1::int) g`,
    [customers - 1],
  );
  const rowsCloned: Record<string, number> = {};
  rowsCloned.customer = await cloneRows(
    'customer',
    'c',
    { id: 'm.customer_id', name: `'Customer ' || m.g`, handle: 'null' },
    `c.id = '${customerId}'`,
  );
  rowsCloned.subscription = await cloneRows(
    'subscription',
    's',
    { id: 'm.subscription_id', customer_id: 'm.customer_id', handle: 'null' },
    `s.id = '${subscriptionId}'`,
  );
  await sql.query(
    `create temp table clone_item on commit drop as
     select m.g, m.subscription_id, t.id as template_id,
            pg_temp.bench_uuid7(floor(extract(epoch from clock_timestamp()) * 1000)::bigint + m.g) as item_id
     from clone m, subscription_item t where t.subscription_id = $1`,
    [subscriptionId],
  );
  rowsCloned.subscription_item = await cloneRows(
    'subscription_item',
    'i',
    { id: 'm.item_id', subscription_id: 'm.subscription_id' },
    `i.id = m.template_id`,
    'clone_item m',
  );
  // The events customerCreate and subscriptionCreate wrote, naming the clone instead of the template.
  rowsCloned.event = await cloneRows(
    'event',
    'e',
    {
      id: 'pg_temp.bench_uuid7(floor(extract(epoch from clock_timestamp()) * 1000)::bigint + m.g)',
      object_id: `case e.object_id when '${customerId}'::uuid then m.customer_id else m.subscription_id end`,
      data: `replace(replace(e.data::text, '${customerId}', m.customer_id::text), '${subscriptionId}', m.subscription_id::text)::jsonb`,
    },
    `e.environment_id = '${environment.id}' and e.object_id in ('${customerId}', '${subscriptionId}')`,
  );
  // The audit rows of the customer, the subscription and its items.
  const audit = (objectId: string) => ({
    id: 'pg_temp.bench_uuid7(floor(extract(epoch from clock_timestamp()) * 1000)::bigint + m.g)',
    object_id: objectId,
  });
  rowsCloned.audit_event =
    (await cloneRows('audit_event', 'a', audit('m.customer_id::text'), `a.object_id = '${customerId}'`)) +
    (await cloneRows(
      'audit_event',
      'a',
      audit('m.subscription_id::text'),
      `a.object_id = '${subscriptionId}'`,
    )) +
    (await cloneRows(
      'audit_event',
      'a',
      audit('m.item_id::text'),
      'a.object_id = m.template_id::text',
      'clone_item m',
    ));
  await sql.query('commit');
  await sql.query('analyze');
  const seedSeconds = Number(process.hrtime.bigint() - seedStarted) / 1e9;

  const queries = new Map<string, number>();
  const originalQuery = pg.Client.prototype.query;
  if (process.env.BENCH_QUERIES) {
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const text = typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string })?.text);
      const key = text.replace(/\s+/g, ' ').slice(0, 110);
      queries.set(key, (queries.get(key) ?? 0) + 1);
      return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof pg.Client.prototype.query;
  }
  const started = process.hrtime.bigint();
  const cpuStarted = process.cpuUsage();
  const helpersCpuStarted = await helpersCpu();
  const postgresStarted = await postgresCpu(postmaster);
  const ctx = createJobContext(orm.em.fork(), environment.id, 'billingRun');
  // BENCH_BATCH=1 bills customer by customer (one transaction each), as runs did before batches.
  const batchSize = process.env.BENCH_BATCH ? Number(process.env.BENCH_BATCH) : undefined;
  const concurrency = loadConfig().BILLING_CONCURRENCY;
  const run = await new BillingRunService(ctx).run(asOf, {
    triggeredBy: 'schedule',
    batchSize,
    concurrency,
    invite: async (runId) => {
      if (jobs) await inviteHelpers(jobs, environment.id, runId, helpers.length);
    },
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuStarted);
  // Each helper logs once its job has returned, just after the run it helped has ended.
  for (let tries = 0; tries < 100 && helpers.some(({ output }) => !output.includes(run.id)); tries++)
    await new Promise((resolve) => setTimeout(resolve, 100));
  const shares = helpedBy(run.id);
  const helpersMs = (await helpersCpu()) - helpersCpuStarted;
  const postgresMs = ((await postgresCpu(postmaster)) ?? Number.NaN) - (postgresStarted ?? Number.NaN);
  pg.Client.prototype.query = originalQuery;
  if (process.env.BENCH_QUERIES) {
    const total = [...queries.values()].reduce((sum, count) => sum + count, 0);
    console.error(`statements per customer: ${(total / customers).toFixed(1)}`);
    for (const [text, count] of [...queries].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
      console.error(`${(count / customers).toFixed(2)}  ${text}`);
    }
  }

  await sql.query('begin');
  await sql.query(`select set_config('app.environment_id', $1, true)`, [environment.id]);
  const { rows } = await sql.query<{
    invoices: number;
    customers: number;
    totals: number;
    template_total: string;
    numbered: number;
    low: number;
    high: number;
  }>(
    `select count(*)::int as invoices, count(distinct customer_id)::int as customers,
       count(distinct total_incl_vat)::int as totals,
       max(total_incl_vat) filter (where customer_id = $2)::text as template_total,
       count(distinct handle)::int as numbered,
       min(substring(handle from '(\\d+)$')::int) as low, max(substring(handle from '(\\d+)$')::int) as high
     from invoice where environment_id = $1`,
    [environment.id, customerId],
  );
  await sql.query('commit');
  const check = rows[0];
  if (!check) throw new Error('no invoice count');
  const problems = [
    run.status !== 'succeeded' && `run ${run.status}: ${JSON.stringify(run.errors.slice(0, 3))}`,
    (run.customersHandedOut !== customers || run.customersDone !== customers) &&
      `the run counts ${run.customersDone} of ${run.customersHandedOut} customers handed out done, for ${customers}`,
    check.invoices !== customers && `${check.invoices} invoices for ${customers} customers`,
    check.customers !== customers && `${check.customers} customers invoiced of ${customers}`,
    check.totals !== 1 && `${check.totals} different totals: the clones are not billed as the template`,
    (check.numbered !== customers || check.low !== 1 || check.high !== customers) &&
      `numbers not gapless: ${check.numbered} distinct, ${check.low}..${check.high}`,
  ].filter(Boolean);
  return {
    customers,
    concurrency,
    processes,
    // The customers each process billed: this one (the lead), then each helper.
    customersPerProcess: [run.customersDone - shares.reduce((sum, done) => sum + done, 0), ...shares],
    seedSeconds: Number(seedSeconds.toFixed(1)),
    rowsCloned,
    seconds: Number(seconds.toFixed(1)),
    invoices: run.invoiceCount,
    periods: run.periodCount,
    invoicesPerHour: Math.round((run.invoiceCount / seconds) * 3600),
    msPerInvoice: Number(((seconds * 1000) / run.invoiceCount).toFixed(2)),
    nodeCpuMsPerInvoice: Number((((cpu.user + cpu.system) / 1000 + helpersMs) / run.invoiceCount).toFixed(2)),
    nodeSystemCpuMsPerInvoice: Number((cpu.system / 1000 / run.invoiceCount).toFixed(2)),
    postgresCpuMsPerInvoice: Number((postgresMs / run.invoiceCount).toFixed(2)),
    templateTotalInclVat: Number(check.template_total),
    checks: problems.length === 0 ? 'held' : problems,
  };
}

try {
  await migrate(owner);
  await startHelpers();
  const results: Awaited<ReturnType<typeof measure>>[] = [];
  for (const size of sizes) {
    const result = await measure(size);
    results.push(result);
    console.log(JSON.stringify(result));
  }
  const base = results[0]?.msPerInvoice ?? 1;
  console.log(
    JSON.stringify({
      curve: results.map((result) => ({
        customers: result.customers,
        msPerInvoiceRatio: Number((result.msPerInvoice / base).toFixed(2)),
      })),
    }),
  );
} finally {
  await (jobs as WorkerUtils | null)?.release();
  for (const { child } of helpers) child.kill('SIGTERM');
  await Promise.all(
    helpers.map(({ child }) =>
      child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : null,
    ),
  );
  await sql.end();
  await orm.close();
  await owner.close();
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
