import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createJobContext } from '../../src/context.ts';
import { billingRunsTotal } from '../../src/metrics.ts';
import { BillingRunService } from '../../src/modules/billing/billing-run.service.ts';
import { billingFixtures, midnight } from '../subscription/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { type ServerProcess, startServer, stopServer } from '../support/server-process.ts';

const WORKER = new URL('../../src/worker.ts', import.meta.url).pathname;
const t = setupTestApp();
const f = billingFixtures(t);

/** Waits for a condition on the database; the test fails on its own timeout if it never holds. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await sleep(50);
}

/** A customer with a monthly advance subscription from `start`, in `env`. */
async function subscribedCustomer(env: TestEnvironment, start: string) {
  const product = await f.createProduct(env, { handle: `seats-${start}` });
  const price = await f.createPrice(env, { pricing: { eur: { amount: 1000 } } });
  const customerId = await f.createCustomer(env);
  const subscription = await f.subscribe(env, {
    customerId,
    term: { start },
    items: [{ productId: product.id, priceId: price.id }],
  });
  return { customerId, subscription };
}

const RUN = `mutation ($asOf: DateTime) { billingRunCreate(asOf: $asOf) {
  billingRun { id status invoiceCount periodCount } userErrors { field message code } } }`;

describe('one billing run at a time per environment, across processes', () => {
  let env: TestEnvironment;
  let holder: pg.Client;

  beforeAll(async () => {
    env = await t.createEnvironment();
    await subscribedCustomer(env, '2026-01-01');
    holder = new pg.Client({ connectionString: t.databaseUrl });
    await holder.connect();
  });

  afterAll(async () => {
    await holder.end();
  });

  const hold = () =>
    holder.query(`select pg_advisory_lock(hashtextextended('billing-run:' || $1, 0))`, [env.id]);
  const release = () =>
    holder.query(`select pg_advisory_unlock(hashtextextended('billing-run:' || $1, 0))`, [env.id]);

  it('refuses a run while another session holds the environment’s lock, and runs once it is free', async () => {
    // given another process's run under way in this environment
    await hold();
    const other = await t.createEnvironment('Other');
    await subscribedCustomer(other, '2026-01-01');

    // when runs are asked for, with and without an Idempotency-Key
    const refused = await t.graphql(RUN, { asOf: midnight('2026-01-01') }, { env });
    const refusedIdempotent = await t.graphql(
      RUN,
      { asOf: midnight('2026-01-01') },
      { env, headers: { 'idempotency-key': 'run-1' } },
    );
    const elsewhere = await t.graphql(RUN, { asOf: midnight('2026-01-01') }, { env: other });

    // then both are refused with CONFLICT and bill nothing, while another environment runs
    for (const response of [refused, refusedIdempotent]) {
      expect(response.body.data.billingRunCreate).toEqual({
        billingRun: null,
        userErrors: [
          {
            field: null,
            message: 'another billing run of this environment is under way; retry when it has finished',
            code: 'CONFLICT',
          },
        ],
      });
    }
    expect(elsewhere.body.data.billingRunCreate.billingRun).toMatchObject({
      status: 'succeeded',
      invoiceCount: 1,
    });
    const runs = await t.sql('select count(*)::int as count from billing_run where environment_id = $1', [
      env.id,
    ]);
    expect(runs).toEqual([{ count: 0 }]);

    // and once the lock is free, the run goes ahead
    await release();
    const allowed = await t.graphql(RUN, { asOf: midnight('2026-01-01') }, { env });
    expect(allowed.body.data.billingRunCreate.billingRun).toMatchObject({
      status: 'succeeded',
      invoiceCount: 1,
    });
  });

  it('runs inside the request’s transaction under an Idempotency-Key, and a retry replays it', async () => {
    // when the same run is asked for twice with one key
    const headers = { 'idempotency-key': 'february' };
    const first = await t.graphql(RUN, { asOf: midnight('2026-02-01') }, { env, headers });
    const retry = await t.graphql(RUN, { asOf: midnight('2026-02-01') }, { env, headers });

    // then the retry is the first answer, replayed, and February was billed once
    expect(first.body.data.billingRunCreate.billingRun).toMatchObject({
      status: 'succeeded',
      periodCount: 1,
    });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    const periods = await t.sql(
      `select period_start::text from billed_period where environment_id = $1 order by period_start`,
      [env.id],
    );
    expect(periods).toEqual([{ period_start: '2026-01-01' }, { period_start: '2026-02-01' }]);

    // and while that transaction's lock is held elsewhere, the keyed run is refused too
    await hold();
    const refused = await t.graphql(
      RUN,
      { asOf: midnight('2026-03-01') },
      { env, headers: { 'idempotency-key': 'march' } },
    );
    await release();
    expect(refused.body.data.billingRunCreate.userErrors[0].code).toBe('CONFLICT');
  });

  it('counts runs by outcome and records job writes in the audit trail without a token', async () => {
    const before =
      (await billingRunsTotal.get()).values.find((value) => value.labels.outcome === 'succeeded')?.value ?? 0;
    const ctx = createJobContext(t.orm.em.fork(), env.id, 'billingRun');
    const run = await new BillingRunService(ctx).run(new Date(midnight('2026-04-01')), {
      triggeredBy: 'schedule',
    });
    expect(run).toMatchObject({ status: 'succeeded', triggeredBy: 'schedule', periodCount: 2 });
    const after = (await billingRunsTotal.get()).values.find(
      (value) => value.labels.outcome === 'succeeded',
    )?.value;
    expect(after).toBe(before + 1);
    const events = await t.sql(
      `select distinct object_type, operation, token_id from audit_event
       where environment_id = $1 and operation = 'billingRun' order by object_type`,
      [env.id],
    );
    expect(events.map((event) => event.object_type)).toEqual([
      'BilledPeriod',
      'BillingRun',
      'Invoice',
      'InvoiceItem',
      'SubscriptionItem',
    ]);
    expect(events.every((event) => event.token_id === null)).toBe(true);

    // and the run reads back through GraphQL with its invoices, and in the list of runs
    const data = await t.graphql(
      `query ($id: UUID!) { billingRun(id: $id) { invoiceIds invoices { id status } }
        billingRuns(first: 50) { edges { node { id } } } }`,
      { id: run.id },
      { env },
    );
    expect(data.body.data.billingRun.invoices).toEqual(
      run.invoiceIds.map((id: string) => ({ id, status: 'booked' })),
    );
    expect(data.body.data.billingRuns.edges.map((edge: { node: { id: string } }) => edge.node.id)).toContain(
      run.id,
    );
  });

  it('stops between customers when asked to, and ends as interrupted', async () => {
    const ctx = createJobContext(t.orm.em.fork(), env.id, 'billingRun');
    const run = await new BillingRunService(ctx).run(new Date(midnight('2026-05-01')), {
      triggeredBy: 'schedule',
      signal: AbortSignal.abort(),
    });
    expect(run).toMatchObject({ status: 'interrupted', periodCount: 0, finishedAt: expect.any(Date) });
  });
});

describe('the server bills on schedule by itself', () => {
  let server: ServerProcess | undefined;

  afterAll(async () => {
    if (server) await stopServer(server);
  });

  it('bills what is due in every environment as jobs, never twice, and keeps billAt ahead of now', {
    timeout: 90_000,
  }, async () => {
    // given subscriptions created through GraphQL in two environments, due since January
    const first = await t.createEnvironment('Scheduled A');
    const second = await t.createEnvironment('Scheduled B');
    const a = await subscribedCustomer(first, '2026-01-01');
    const b = await subscribedCustomer(second, '2026-01-01');

    // when a server process starts its job worker, twice (each start queues a billing tick)
    const billingServer = () =>
      startServer({ DATABASE_URL: t.databaseUrl, BILLING_RUN_SCHEDULE: '0 * * * *' });
    server = await billingServer();
    const scheduledRuns = async (environmentId: string) =>
      (
        await t.sql(
          `select count(*)::int as count from billing_run
           where environment_id = $1 and triggered_by = 'schedule' and status = 'succeeded'`,
          [environmentId],
        )
      )[0]?.count as number;
    await until(async () => (await scheduledRuns(first.id)) >= 1 && (await scheduledRuns(second.id)) >= 1);
    expect(await stopServer(server)).toBe(0);
    server = await billingServer();
    await until(async () => (await scheduledRuns(first.id)) >= 2 && (await scheduledRuns(second.id)) >= 2);
    const exitCode = await stopServer(server);
    server = undefined;

    // then each customer has one invoice billing every period started by now, each once
    for (const [env, { customerId, subscription }] of [
      [first, a],
      [second, b],
    ] as const) {
      const invoices = await f.invoicesOf(env, customerId);
      expect(invoices).toHaveLength(1);
      const periods = invoices[0].items.map((item: { periodStart: string }) => item.periodStart);
      expect(new Set(periods).size).toBe(periods.length);
      expect(periods[0]).toBe('2026-01-01');
      const [{ as_of: latest }] = (await t.sql<{ as_of: Date }>(
        'select max(as_of) as as_of from billing_run where environment_id = $1',
        [env.id],
      )) as [{ as_of: Date }];
      const read = await t.rest('GET', `/subscriptions/${subscription.id}`, { env });
      const [item] = read.body.items;
      expect(item.period.start).toBe(invoices[0].items.at(-1).periodEnd);
      expect(new Date(item.billAt).getTime()).toBeGreaterThan(latest.getTime());
    }
    expect(exitCode).toBe(0);
  });

  it('bills with a worker alone (npm run worker) beside a server that runs none', {
    timeout: 90_000,
  }, async () => {
    // given a due subscription and a server that leaves jobs to a separate worker
    const env = await t.createEnvironment('Worker alone');
    const { customerId } = await subscribedCustomer(env, '2026-02-01');
    server = await startServer({
      DATABASE_URL: t.databaseUrl,
      BILLING_RUN_SCHEDULE: '0 * * * *',
      JOB_WORKER: 'false',
    });
    expect(server.output()).toContain('jobs: off');

    // when the worker runs on its own, its runs asking a helper each (which its second job slot takes)
    const worker = spawn(process.execPath, [WORKER], {
      env: {
        ...process.env,
        DATABASE_URL: t.databaseUrl,
        BILLING_RUN_SCHEDULE: '0 * * * *',
        BILLING_HELPERS: '1',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Also when the test fails or times out: a worker left running would bill this database on.
    onTestFinished(() => {
      if (worker.exitCode === null) worker.kill('SIGKILL');
    });
    let output = '';
    worker.stdout?.on('data', (chunk) => (output += chunk));
    worker.stderr?.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => worker.once('exit', resolve));
    const finishedRun = async () =>
      (await t.sql(`select 1 from billing_run where environment_id = $1 and status <> 'running'`, [env.id]))
        .length > 0;
    await until(
      async () => ((await finishedRun()) && /billing run help/.test(output)) || worker.exitCode !== null,
    );
    worker.kill('SIGTERM');

    // then it billed the customer, once, and stopped cleanly
    expect(await exited).toBe(0);
    expect(output).toContain('job worker running');
    expect(await f.invoicesOf(env, customerId)).toHaveLength(1);
    // and the run's helper came (whether it found customers left or the run over), and the run counts all
    const [run] = await t.sql<{ status: string; handed: number; done: number }>(
      `select status, customers_handed_out as handed, customers_done as done from billing_run
       where environment_id = $1`,
      [env.id],
    );
    expect(run).toEqual({ status: 'succeeded', handed: 1, done: 1 });
    expect(output).toMatch(/"msg":"billing run help/);
  });

  it('refuses to run a worker alone without DATABASE_URL', async () => {
    const worker = spawn(process.execPath, [WORKER], {
      env: { ...process.env, DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    worker.stderr?.on('data', (chunk) => (output += chunk));
    expect(await new Promise((resolve) => worker.once('exit', resolve))).toBe(1);
    expect(output).toContain('npm run worker needs DATABASE_URL');
  });
});
