/*
 * Metering: `node bench/metering.ts [--events N] [--large] [--concurrency C] [--customers K]`
 * (default 1,000,000 events, 4 concurrent clients, 1,000 customers; `--large` is 10,000,000 events).
 * Starts its own embedded PostgreSQL in a temporary directory and sends batches of 1,000 usage events
 * through POST /events in this one server process (authentication, body parsing, the environment's
 * transaction, one statement for the keys and one for the events), spread over ten months so ten
 * partitions fill. It reports sustained ingestion (events/s) and the latency per 1,000-event batch
 * (p50, p99), then the time to aggregate one customer's month of events and the plan of that query,
 * which reads only that month's partition.
 *
 * `--fill sql` (the default with `--large`) skips the API: the events go into `usage_event` with
 * `insert … select … from generate_series`, in chunks of 500,000, through the same monthly partitions
 * (PostgreSQL routes each row to its month), so the 10,000,000-event table is built in minutes and the
 * aggregation is measured over it. That fill writes no `usage_event_key` rows (aggregation never reads
 * them) and reports no ingestion rate.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pino } from 'pino';
import { createApp } from '../src/app.ts';
import { AccessService } from '../src/auth/access.service.ts';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate, openOrm } from '../src/db/orm.ts';
import { inEnvironment } from '../src/db/tenant-transaction.ts';
import { type BillableMetric, BillableMetricSchema } from '../src/modules/metering/metering.entity.ts';
import { aggregateUsage, aggregationQuery } from '../src/modules/metering/usage.aggregate.ts';
import { entities } from '../src/modules/registry.ts';
import { postmasterOf, postgresCpu as serverCpu } from './proc-cpu.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string' },
    large: { type: 'boolean', default: false },
    concurrency: { type: 'string', default: '4' },
    customers: { type: 'string', default: '1000' },
    fill: { type: 'string' },
  },
});
const total = Number(values.events ?? (values.large ? 10_000_000 : 1_000_000));
const concurrency = Number(values.concurrency);
const customerCount = Number(values.customers);
const fill = values.fill ?? (values.large ? 'sql' : 'api');
if (fill !== 'sql' && fill !== 'api') throw new Error('--fill is sql or api');
const FILL_CHUNK = 500_000;
const BATCH = 1000;
const MONTHS = 10; // January to October 2026

const dataDir = await mkdtemp(path.join(tmpdir(), 'metering-bench-'));
await chmod(dataDir, 0o755);
const database = await startEmbeddedDatabase(dataDir);
const owner = await openOrm(database.url, { entities, poolMax: 1, owner: true });
const orm = await openOrm(database.url, { entities, poolMax: concurrency + 2 });
const now = () => Number(process.hrtime.bigint()) / 1e6;

/** CPU ms of the embedded PostgreSQL: the postmaster, its backends and reaped ones. */
const postgresCpu = async () => serverCpu(await postmasterOf(dataDir).catch(() => null));
try {
  await migrate(owner);
  const access = new AccessService(owner.em.fork());
  const environment = await access.createEnvironment('Bench');
  const { secret } = await access.createToken([environment.id]);
  const app = createApp({ orm, logger: pino({ level: process.env.BENCH_LOG ?? 'silent' }) });
  const headers = {
    authorization: `Bearer ${secret}`,
    'x-environment': environment.id,
    'content-type': 'application/json',
  };
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are untyped JSON
  const post = async (pathName: string, body: unknown): Promise<any> => {
    const response = await app.fetch(`http://bench${pathName}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as { data?: unknown; errors?: unknown[] };
    if (response.status >= 300 || json.errors) throw new Error(JSON.stringify(json));
    return pathName === '/graphql' ? json.data : json;
  };
  await post('/graphql', {
    query: `mutation { billableMetricCreate(input: { code: "gb", name: "GB", aggregation: sum, fieldName: "gb" }) { userErrors { message } } }`,
  });
  await post('/graphql', {
    query: `mutation { billableMetricCreate(input: { code: "seats", name: "Seats", aggregation: weighted_sum, fieldName: "gb" }) { userErrors { message } } }`,
  });
  const customers: string[] = [];
  for (let n = 0; n < customerCount; n += 1) {
    const data = await post('/graphql', {
      query: `mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } } }`,
      variables: { input: { name: `Customer ${n}`, currency: 'EUR', handle: `c${n}` } },
    });
    customers.push(data.customerCreate.customer.id);
  }

  // Ingestion: `concurrency` clients, each sending batches until `total` events went out.
  const start = Date.UTC(2026, 0, 1);
  const span = Date.UTC(2026, MONTHS, 1) - start;
  let sent = 0;
  let batchNumber = 0;
  const latencies: number[] = [];
  const makeBatch = (number: number) =>
    Array.from({ length: BATCH }, (_, i) => ({
      transactionId: `b${number}-${i}`,
      customer: `c${(number * 7 + i) % customerCount}`,
      metric: i % 10 === 0 ? 'seats' : 'gb',
      timestamp: new Date(start + Math.floor(Math.random() * span)).toISOString(),
      properties: { gb: ((i % 97) + 1) / 4, region: i % 2 ? 'eu' : 'us' },
    }));
  const client = async () => {
    while (sent < total) {
      sent += BATCH;
      const number = batchNumber++;
      const events = makeBatch(number);
      const begin = now();
      const result = await post('/events', { events });
      latencies.push(now() - begin);
      if (result.accepted !== BATCH)
        throw new Error(`batch ${number}: ${JSON.stringify(result).slice(0, 500)}`);
    }
  };
  /** The SQL fill: `total` events in time order over the ten months, each chunk one statement and transaction. */
  const fillBySql = async () => {
    const ids = await owner.em
      .getConnection()
      .execute<{ id: string; code: string }[]>(
        'select id, code from billable_metric where environment_id = ?',
        [environment.id],
      );
    const metricId = (code: string) => ids.find((row) => row.code === code)?.id as string;
    for (let month = 0; month < MONTHS; month += 1) {
      await owner.em
        .getConnection()
        .execute('select usage_event_partition(?::date)', [
          new Date(Date.UTC(2026, month, 1)).toISOString().slice(0, 10),
        ]);
    }
    const begin = now();
    for (let low = 0; low < total; low += FILL_CHUNK) {
      const high = Math.min(total, low + FILL_CHUNK) - 1;
      await inEnvironment(owner.em.fork(), environment.id, (em: EntityManager) =>
        em.execute(
          `insert into usage_event (environment_id, id, transaction_id, customer_id, metric_id, timestamp, value, properties)
           select ?, gen_random_uuid(), 'fill-' || g, (?::uuid[])[1 + (g * 7 + g / 1000) % ?],
             case when g % 10 = 0 then ?::uuid else ?::uuid end,
             to_timestamp(? + (g::float8 + random()) * ? / 1000),
             ((g % 97) + 1) / 4.0,
             jsonb_build_object('gb', ((g % 97) + 1) / 4.0, 'region', case when g % 2 = 1 then 'eu' else 'us' end)
           from generate_series(?::bigint, ?::bigint) as g`,
          [
            environment.id,
            `{${customers.join(',')}}`,
            customerCount,
            metricId('seats'),
            metricId('gb'),
            start / 1000,
            span / total,
            low,
            high,
          ],
        ),
      );
      process.stderr.write(
        `  ${(high + 1).toLocaleString('en')} events filled, ${((now() - begin) / 1000).toFixed(0)} s\n`,
      );
    }
    return (now() - begin) / 1000;
  };
  if (fill === 'sql') {
    const seconds = await fillBySql();
    await aggregationReport(
      `fill: ${total.toLocaleString('en')} events by insert … select from generate_series in ${seconds.toFixed(0)} s (${Math.round(total / seconds).toLocaleString('en')} rows/s; no ingestion rate measured; load average ${loadavg()
        .map((load) => load.toFixed(1))
        .join(' ')}, ${availableParallelism()} cores)`,
    );
  } else {
    await ingestThroughApi();
  }

  async function ingestThroughApi() {
    const cpuStart = process.cpuUsage();
    const postgresStart = await postgresCpu();
    const ingestStart = now();
    let lastReport = ingestStart;
    const progress = setInterval(() => {
      const at = now();
      if (at - lastReport > 15_000) {
        process.stderr.write(
          `  ${latencies.length * BATCH} events, ${(((latencies.length * BATCH) / (at - ingestStart)) * 1000).toFixed(0)} events/s\n`,
        );
        lastReport = at;
      }
    }, 1000);
    await Promise.all(Array.from({ length: concurrency }, client));
    clearInterval(progress);
    const ingestSeconds = (now() - ingestStart) / 1000;
    const cpu = process.cpuUsage(cpuStart);
    const postgresEnd = await postgresCpu();
    const sorted = [...latencies].sort((x, y) => x - y);
    const quantile = (q: number) =>
      sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
    const ingested = latencies.length * BATCH;
    await aggregationReport(
      [
        `ingestion: ${ingested.toLocaleString('en')} events in ${ingestSeconds.toFixed(1)} s through POST /events, ${concurrency} concurrent clients, batches of ${BATCH}`,
        `  sustained: ${Math.round(ingested / ingestSeconds).toLocaleString('en')} events/s`,
        `  per 1,000-event batch: p50 ${quantile(0.5).toFixed(1)} ms, p99 ${quantile(0.99).toFixed(1)} ms, max ${(sorted.at(-1) ?? 0).toFixed(1)} ms`,
        `  CPU per 1,000 events: server ${((cpu.user + cpu.system) / 1000 / (ingested / 1000)).toFixed(1)} ms, PostgreSQL ${
          postgresStart !== null && postgresEnd !== null
            ? ((postgresEnd - postgresStart) / (ingested / 1000)).toFixed(1)
            : '?'
        } ms (load average at the end ${loadavg()
          .map((load) => load.toFixed(1))
          .join(' ')}, ${availableParallelism()} cores)`,
      ].join('\n'),
    );
  }

  async function aggregationReport(header: string) {
    // Aggregation over the large table: one customer, one month.
    await owner.em.getConnection().execute('analyze usage_event');
    const tableSize = await owner.em
      .getConnection()
      .execute<{ size: string }[]>(
        `select pg_size_pretty(sum(pg_total_relation_size(inhrelid))) as size from pg_inherits where inhparent = 'usage_event'::regclass`,
      );
    const window = {
      customerId: customers[42 % customerCount] as string,
      from: new Date('2026-06-01T00:00:00Z'),
      to: new Date('2026-07-01T00:00:00Z'),
    };
    const timed = async (code: string) =>
      inEnvironment(orm.em.fork(), environment.id, async (em: EntityManager) => {
        const metric = (await em.findOneOrFail(BillableMetricSchema, {
          environmentId: environment.id,
          code,
        })) as BillableMetric;
        const runs: number[] = [];
        let value = '';
        for (let n = 0; n < 7; n += 1) {
          const begin = now();
          value = await aggregateUsage(em, environment.id, metric, window);
          runs.push(now() - begin);
        }
        runs.sort((x, y) => x - y);
        const { sql, params } = aggregationQuery(environment.id, metric, window);
        const plan = await em.execute<{ 'QUERY PLAN': string }[]>(
          `explain (analyze, costs off, timing off, summary off) ${sql}`,
          params,
        );
        return { value, median: runs[3] as number, plan: plan.map((row) => row['QUERY PLAN']).join('\n') };
      });
    const sum = await timed('gb');
    const weighted = await timed('seats');
    const partitionsRead = (plan: string) =>
      [...new Set(plan.match(/usage_event_\d{4}_\d{2}/g) ?? [])].sort();

    const report = [
      header,
      `usage_event: ${tableSize[0]?.size} over ${MONTHS} monthly partitions, ${customerCount} customers`,
      `aggregation, one customer, June 2026 (median of 7):`,
      `  sum: ${sum.median.toFixed(2)} ms (value ${sum.value}), partitions read: ${partitionsRead(sum.plan).join(', ')}`,
      `  weighted_sum: ${weighted.median.toFixed(2)} ms (value ${weighted.value}), partitions read: ${partitionsRead(weighted.plan).join(', ')}`,
      '',
      'EXPLAIN ANALYZE of the sum:',
      sum.plan,
    ];
    process.stdout.write(`${report.join('\n')}\n`);
  }
} finally {
  await orm.close();
  await owner.close();
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
