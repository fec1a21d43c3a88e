/**
 * `npm run bench:starve`: does one tenant sending the heaviest queries the limits allow starve the
 * others? Measures a well-behaved client's latency on an idle server, then again while another
 * environment's token sends, back to back on several connections, a full page of 100 invoices with
 * every field of their lines and settlements (the most the query cost limit admits), and reports
 * the ratio of the two p99s against the 2× target. The heavy token does what the limits allow: when
 * its query cost budget is spent it waits as Retry-After says (a client that ignores it floods the
 * server with refusals, which the request rate limit and the network's own defences answer, not the
 * cost budget). Takes about a minute; writes nothing.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AccessService } from '../src/auth/access.service.ts';
import { createRequestContext } from '../src/context.ts';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate, openOrm } from '../src/db/orm.ts';
import { GRAPHQL_LIMITS } from '../src/limits/graphql-limits.ts';
import { CustomerCreateInput } from '../src/modules/customer/customer.input.ts';
import { CustomerService } from '../src/modules/customer/customer.service.ts';
import { InvoiceCreateInput } from '../src/modules/invoice/invoice.input.ts';
import { InvoiceDraftService } from '../src/modules/invoice/invoice-drafts.service.ts';
import { entities } from '../src/modules/registry.ts';
import { type Child, startChild, startFlags, stopChild } from './child.ts';
import { type Measurement, measure } from './load.ts';
import { CUSTOMER_QUERY, type Scenario } from './scenarios.ts';
import { seed } from './seed.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const settings = {
  seconds: Number(process.env.BENCH_SECONDS ?? 10),
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 2),
  /** Connections of the well-behaved client and of the heavy tenant. */
  connections: Number(process.env.BENCH_CONNECTIONS ?? 2),
  heavyConnections: Number(process.env.BENCH_HEAVY_CONNECTIONS ?? 4),
  heavyInvoices: 100,
  heavyLines: Number(process.env.BENCH_HEAVY_LINES ?? 100),
};

const HEAVY_QUERY = `{ invoices(first: 100) { edges { cursor node {
  id type status handle date dueDate currency memo createdAt updatedAt bookedAt
  totalExclVat totalVat totalInclVat totalDue settlementStatus
  customerId customer { handle name billingAddress { street1 street2 city postalCode state county country } }
  items {
    id title description sku quantity unitAmount amount taxAmount periodStart periodEnd creditedItemId
    discount { amount percentage } tax { taxable taxCode taxRate }
  }
  settlements { id date amount reference note createdAt }
} } pageInfo { hasNextPage endCursor } } }`;

const log = (message: string) => process.stdout.write(`${message}\n`);

const graphqlScenario = (name: string, token: string, environmentId: string, body: (n: number) => string) =>
  ({
    name,
    status: 200,
    graphql: true,
    request: (n: number) => ({
      method: 'POST',
      path: '/graphql',
      headers: {
        authorization: `Bearer ${token}`,
        'x-environment': environmentId,
        'content-type': 'application/json',
      },
      body: body(n),
    }),
  }) satisfies Scenario;

/**
 * The heavy tenant: each connection sends the heavy query back to back and, when refused with 429,
 * waits as Retry-After says before the next.
 */
async function sendHeavy(scenario: Scenario, url: string, seconds: number) {
  const tally = { served: 0, refused: 0, failed: 0, seconds };
  const end = Date.now() + seconds * 1000;
  const connection = async () => {
    while (Date.now() < end) {
      const { method, path: target, headers, body } = scenario.request(0);
      const response = await fetch(`${url}${target}`, { method, headers, body });
      const text = await response.text();
      if (response.status === 429) {
        tally.refused++;
        const wait = Number(response.headers.get('retry-after') ?? 1) * 1000;
        await new Promise((resolve) => setTimeout(resolve, Math.min(wait, end - Date.now())));
      } else if (response.status === 200 && !text.includes('"errors"')) tally.served++;
      else tally.failed++;
    }
  };
  await Promise.all(Array.from({ length: settings.heavyConnections }, connection));
  return tally;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'billing-starve-'));
  await chmod(dataDir, 0o755);
  log('starting the embedded PostgreSQL');
  const database = await startEmbeddedDatabase(dataDir);
  let server: Child | undefined;
  try {
    const owner = await openOrm(database.url, { entities, poolMax: 4, owner: true });
    await migrate(owner);
    log('seeding the well-behaved tenant');
    const calm = await seed(owner);
    log(`seeding the heavy tenant: ${settings.heavyInvoices} invoices of ${settings.heavyLines} lines`);
    const access = new AccessService(owner.em.fork());
    const environment = await access.createEnvironment('Heavy');
    const { token, secret } = await access.createToken([environment.id], 'Heavy');
    const context = () => createRequestContext(owner.em.fork(), environment.id, token);
    const customer = await new CustomerService(context()).create(
      CustomerCreateInput.parse({ name: 'Heavy customer', currency: 'EUR' }),
    );
    const lines = Array.from({ length: settings.heavyLines }, (_, i) => ({
      quantity: i + 1,
      unitAmount: 100,
      title: `Line ${i}`,
      description: 'A line long enough to weigh something in the response body',
    }));
    for (let n = 0; n < settings.heavyInvoices; n++) {
      await new InvoiceDraftService(context()).create(
        InvoiceCreateInput.parse({ customerId: customer.id, date: '2026-02-28', items: lines }),
      );
    }
    await owner.close();

    const flags = await startFlags();
    server = await startChild(
      [...flags, path.join(HERE, '..', 'src', 'main.ts')],
      { DATABASE_URL: database.url, LOG_LEVEL: 'warn', NODE_ENV: 'production', RATE_LIMIT_REQUESTS: '0' },
      '/health',
    );
    const url = server.url;
    const processes = { server: server.process.pid as number, postgres: null };

    const heavy = graphqlScenario('heavy tenant', secret, environment.id, () =>
      JSON.stringify({ query: HEAVY_QUERY }),
    );
    const probe = await fetch(`${url}/graphql`, heavy.request(0));
    const probeBody = await probe.text();
    if (probeBody.includes('"errors"'))
      throw new Error(`the heavy query is refused: ${probeBody.slice(0, 300)}`);
    log(
      `heavy query: ${(probeBody.length / 1e6).toFixed(1)} MB per response, within the cost limit of ${GRAPHQL_LIMITS.maxCost}`,
    );

    const calmScenario = graphqlScenario('well-behaved client', calm.token, calm.environmentId, (n) =>
      JSON.stringify({
        query: CUSTOMER_QUERY,
        variables: { id: calm.customerIds[n % calm.customerIds.length] },
      }),
    );
    const options = {
      connections: settings.connections,
      seconds: settings.seconds,
      warmupSeconds: settings.warmupSeconds,
    };
    log(
      `measuring the well-behaved client alone (${settings.connections} connections, ${settings.seconds} s)`,
    );
    const idle = await measure(url, processes, calmScenario, options);
    log(
      `measuring it again while the heavy tenant sends its query on ${settings.heavyConnections} connections`,
    );
    const heavyRun = sendHeavy(heavy, url, settings.seconds + settings.warmupSeconds * 2 + 2);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const loaded = await measure(url, processes, calmScenario, options);
    const heavyResult = await heavyRun;

    const row = (name: string, m: Measurement) =>
      `| ${name} | ${m.requestsPerSecond.toFixed(0)} | ${m.p50} | ${m.p99} | ${m.errors} |`;
    const ratio = loaded.p99 / idle.p99;
    log('');
    log('| Load | req/s | p50 ms | p99 ms | errors |');
    log('| --- | ---: | ---: | ---: | ---: |');
    log(row('well-behaved client, idle server', idle));
    log(row('well-behaved client, heavy tenant busy', loaded));
    log('');
    log(
      `heavy tenant: ${heavyResult.served} heavy queries served (${(heavyResult.served / heavyResult.seconds).toFixed(1)}/s), ${heavyResult.refused} refused with Retry-After, ${heavyResult.failed} failed otherwise`,
    );
    log('');
    log(`p99 ratio ${ratio.toFixed(2)}× (target ≤ 2×): ${ratio <= 2 ? 'met' : 'NOT met'}`);
  } finally {
    await stopChild(server);
    await database.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
