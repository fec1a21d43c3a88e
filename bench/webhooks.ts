/*
 * Webhook delivery: `node bench/webhooks.ts [events] [concurrency]` (default 1,000 events, a worker
 * running 4 jobs at once). Starts its own embedded PostgreSQL in a temporary directory and a receiver
 * on 127.0.0.1 that answers 200 at once, with one endpoint for every event type. Then:
 *
 * - latency: customers are created through GraphQL, 20 a second for 10 seconds, while the worker runs;
 *   each delivery's latency is its arrival at the receiver minus its event's time (the `timestamp` of
 *   the message: when the change committed, give or take the transaction's length);
 * - throughput: `events` events are written while no worker runs (100 a transaction), then a worker
 *   starts and the time until the last one arrived gives deliveries per second (each event passes
 *   through the event relay and two jobs: the fan-out and the delivery).
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { createApp } from '../src/app.ts';
import { AccessService } from '../src/auth/access.service.ts';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate, openOrm } from '../src/db/orm.ts';
import { inEnvironment } from '../src/db/tenant-transaction.ts';
import { startWorker } from '../src/jobs/worker.ts';
import { recordEvent } from '../src/modules/event/event.service.ts';
import { entities } from '../src/modules/registry.ts';
import { graphqlCaller } from './graphql-client.ts';

const events = Number(process.argv[2] ?? 1000);
const concurrency = Number(process.argv[3] ?? 4);
const logger = pino({ level: 'silent' });
const dataDir = await mkdtemp(path.join(tmpdir(), 'webhook-bench-'));
await chmod(dataDir, 0o755);
const database = await startEmbeddedDatabase(dataDir);
const owner = await openOrm(database.url, { entities, poolMax: 1, owner: true });
const orm = await openOrm(database.url, { entities, poolMax: concurrency + 4 });

/** Arrivals at the receiver: the message's event time and when it arrived (ms since the epoch). */
const arrivals: { id: string; eventAt: number; arrivedAt: number }[] = [];
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const arrivedAt = Date.now();
    const message = JSON.parse(Buffer.concat(chunks).toString()) as { id: string; timestamp: string };
    arrivals.push({ id: message.id, eventAt: Date.parse(message.timestamp), arrivedAt });
    response.writeHead(200).end('ok');
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const workerConfig = {
  BILLING_RUN_SCHEDULE: 'off',
  JOB_CONCURRENCY: concurrency,
  EVENT_RETENTION_DAYS: 30,
  SMTP_URL: undefined,
  MAIL_FROM: 'billing@example.com',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: true,
};

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
const waitFor = async (count: number, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  while (new Set(arrivals.map((arrival) => arrival.id)).size < count) {
    if (Date.now() > deadline) throw new Error(`only ${arrivals.length} of ${count} deliveries arrived`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

try {
  await migrate(owner);
  const access = new AccessService(owner.em.fork());
  const environment = await access.createEnvironment('Bench');
  const { secret } = await access.createToken([environment.id]);
  const app = createApp({ orm, logger, allowPrivateWebhookTargets: true });
  const graphql = graphqlCaller(app, environment.id, secret);
  await graphql(
    `mutation ($input: WebhookEndpointCreateInput!) { webhookEndpointCreate(input: $input) { userErrors { message } } }`,
    { input: { url: receiverUrl } },
  );

  // Latency: a steady stream of changes while the worker runs.
  let worker = await startWorker(workerConfig, { orm, ownerUrl: database.url, logger });
  const streamed = 200;
  const started = Date.now();
  for (let n = 0; n < streamed; n++) {
    await graphql(
      `mutation ($name: String!) { customerCreate(input: { name: $name }) { customer { id } } }`,
      {
        name: `Customer ${n}`,
      },
    );
    const due = started + (n + 1) * 50;
    if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
  }
  await waitFor(streamed, 60_000);
  const latencies = arrivals.map((arrival) => arrival.arrivedAt - arrival.eventAt).sort((a, b) => a - b);
  await worker.stop();

  // Throughput: a backlog written while no worker runs, then delivered.
  arrivals.length = 0;
  for (let written = 0; written < events; written += 100) {
    await inEnvironment(orm.em.fork(), environment.id, async (em) => {
      for (let n = written; n < Math.min(events, written + 100); n++) {
        recordEvent(em, environment.id, {
          type: 'customer.updated',
          objectType: 'customer',
          objectId: environment.id,
          data: { n },
        });
      }
      await em.flush();
    });
  }
  const backlogStart = Date.now();
  worker = await startWorker(workerConfig, { orm, ownerUrl: database.url, logger });
  await waitFor(events, 600_000);
  const backlogSeconds = (Math.max(...arrivals.map((arrival) => arrival.arrivedAt)) - backlogStart) / 1000;
  await worker.stop();

  const report = [
    `event-to-delivery latency, ${streamed} events at 20/s, worker concurrency ${concurrency}: ` +
      `p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, max ${latencies.at(-1)} ms`,
    `backlog of ${events} events, one endpoint: delivered in ${backlogSeconds.toFixed(1)} s, ` +
      `${(events / backlogSeconds).toFixed(0)} deliveries per second`,
  ];
  process.stdout.write(`${report.join('\n')}\n`);
} finally {
  receiver.close();
  await orm.close();
  await owner.close();
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
