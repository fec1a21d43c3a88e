import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { StatementRecorder } from '../../bench/statements.ts';
import { createJobContext } from '../../src/context.ts';
import { inEnvironment } from '../../src/db/tenant-transaction.ts';
import {
  BILLING_BATCH,
  type BillingRunOptions,
  type BillingRunProgress,
  BillingRunService,
} from '../../src/modules/billing/billing-run.service.ts';
import { billingFixtures, midnight } from '../subscription/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = billingFixtures(t);

/** A billing run, or a helper of one, in a process of its own (billing-run-process.ts). */
const CHILD = new URL('./billing-run-process.ts', import.meta.url).pathname;

/** Waits for a condition on the database; the test fails on its own timeout if it never holds. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await sleep(20);
}

/** A run as the job queue makes it: batches of customers, each its own transaction. */
async function scheduledRun(env: TestEnvironment, asOf: string, options: Partial<BillingRunOptions> = {}) {
  const ctx = createJobContext(t.orm.em.fork(), env.id, 'billingRun');
  return new BillingRunService(ctx).run(new Date(asOf), { triggeredBy: 'schedule', ...options });
}

/** `count` customers, in the order made, each with a monthly advance subscription from `start` on `priceId`. */
async function customers(
  env: TestEnvironment,
  count: number,
  start: string,
  priceId: (n: number) => string,
  input: Record<string, unknown> = {},
) {
  const product = await f.createProduct(env, { handle: `seats-${start}` });
  const ids: string[] = [];
  for (let n = 0; n < count; n += 1) {
    const customerId = await f.createCustomer(env, { name: `Customer ${n}`, ...input });
    await f.subscribe(env, {
      customerId,
      handle: `subscription-${start}-${n}`,
      term: { start },
      items: [{ productId: product.id, priceId: priceId(n) }],
    });
    ids.push(customerId);
  }
  return ids;
}

describe('a billing run bills customers in batches, one transaction each', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment();
  });

  it('records a customer of the batch it cannot bill, and bills the others around it with gapless numbers', async () => {
    // given five customers in one batch, the third on a price that lost its EUR pricing
    const good = await f.createPrice(env, { pricing: { eur: { amount: 500 } } });
    const losing = await f.losingPrice(env);
    const ids = await customers(env, 5, '2026-05-01', (n) => (n === 2 ? losing.id : good.id));
    await losing.lose();
    expect(ids.length).toBeLessThan(BILLING_BATCH);

    // when the scheduled run bills them
    const progress: BillingRunProgress[] = [];
    const run = await scheduledRun(env, midnight('2026-05-01'), {
      onProgress: (p) => {
        progress.push(p);
      },
    });

    // then the four others are billed, the third recorded as the run's error, and nothing of it written
    expect(run).toMatchObject({ status: 'failed', invoiceCount: 4, periodCount: 4 });
    expect(run.errors).toEqual([
      {
        customerId: ids[2],
        message: `price "Losing" (${losing.id}) of subscription subscription-2026-05-01-2 has no pricing in EUR`,
      },
    ]);
    const invoices = await t.sql(
      `select customer_id, handle from invoice where environment_id = $1 order by handle`,
      [env.id],
    );
    const sorted = [...ids].sort();
    const billed = sorted.filter((id) => id !== ids[2]);
    // numbered in the order the customers were billed (id order), with no gap where the third failed
    expect(invoices).toEqual(billed.map((id, n) => ({ customer_id: id, handle: `INV-00000${n + 1}` })));
    const periods = await t.sql(
      `select count(*)::int as count from billed_period where environment_id = $1 and billing_run_id = $2`,
      [env.id, run.id],
    );
    expect(periods).toEqual([{ count: 4 }]);
    // and progress is told for every customer, the failed one too, in order
    expect(progress.map((p) => [p.customerId, p.customersDone])).toEqual(sorted.map((id, n) => [id, n + 1]));
    expect(run.invoiceIds).toHaveLength(4);
  });

  it('sends a fixed number of statements per batch and a few per invoice', async () => {
    // given ten customers due, in an environment of their own, billed once already (which created
    // the ledger chart and the number counters)
    env = await t.createEnvironment('Statements');
    const price = await f.createPrice(env, { pricing: { eur: { amount: 900 } } });
    await customers(env, 10, '2026-07-01', () => price.id);
    expect(await scheduledRun(env, midnight('2026-07-01'))).toMatchObject({ invoiceCount: 10 });

    // when the scheduled run bills them
    const recorder = new StatementRecorder();
    let run: Awaited<ReturnType<typeof scheduledRun>> | undefined;
    let statements: string[];
    try {
      statements = await recorder.during(async () => {
        run = await scheduledRun(env, midnight('2026-08-01'));
      });
    } finally {
      recorder.restore();
    }

    // then ten invoices are booked in one batch
    expect(run).toMatchObject({ status: 'succeeded', invoiceCount: 10, periodCount: 10 });
    // and fewer statements than the customer-by-customer run's 51 per invoice (bench/RESULTS.md): the
    // batch's transaction and reads of due work are shared, the settings and the customers are read once per batch
    const perInvoice = statements.length / 10;
    expect(perInvoice).toBeLessThan(30);
    const once = (pattern: RegExp) => statements.filter((statement) => pattern.test(statement)).length;
    expect(once(/from "?subscription"? as/)).toBe(1);
    expect(once(/from "?seller_profile"?/)).toBeLessThanOrEqual(1);
    expect(once(/from "?ledger_settings"?/)).toBeLessThanOrEqual(1);
    // the lock's transaction, the run's start and finish, the batch, and the hand-outs of its
    // customers and of none (a transaction each, so that the run's row is not held while a batch bills)
    expect(once(/^begin/)).toBeLessThanOrEqual(6);
  });
});

/** A run as the job queue makes it, with batches of two customers, three of them billed at once. */
const concurrentRun = (env: TestEnvironment, asOf: string, options: Partial<BillingRunOptions> = {}) =>
  scheduledRun(env, asOf, { batchSize: 2, concurrency: 3, ...options });

/** Each customer's invoices, the invoice handles and the journal's entry numbers of the environment. */
async function written(env: TestEnvironment) {
  const invoices = await t.sql<{ customer_id: string; handle: string }>(
    `select customer_id, handle from invoice where environment_id = $1 order by handle`,
    [env.id],
  );
  const entries = await t.sql<{ number: string }>(
    `select number from journal_entry where environment_id = $1 order by number`,
    [env.id],
  );
  return {
    customers: invoices.map((row) => row.customer_id).sort(),
    handles: invoices.map((row) => row.handle),
    entries: entries.map((row) => Number(row.number)),
  };
}

const handles = (count: number) =>
  Array.from({ length: count }, (_, n) => `INV-${String(n + 1).padStart(6, '0')}`);
const numbers = (count: number) => Array.from({ length: count }, (_, n) => n + 1);

describe('a scheduled billing run bills several batches at once', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment();
  });

  it('bills every customer once with gapless numbers, records a failing one, and tells progress in order', async () => {
    // given eleven customers due, the sixth on a price that lost its EUR pricing
    const good = await f.createPrice(env, { pricing: { eur: { amount: 500 } } });
    const losing = await f.losingPrice(env);
    const ids = (await customers(env, 11, '2026-05-01', (n) => (n === 5 ? losing.id : good.id))).sort();
    await losing.lose();
    const [failing] = await t.sql<{ customer_id: string }>(
      `select s.customer_id from subscription s join subscription_item i on i.subscription_id = s.id
       where s.environment_id = $1 and i.price_id = $2`,
      [env.id, losing.id],
    );

    // when a run bills them two by two, three batches at once
    const progress: BillingRunProgress[] = [];
    const run = await concurrentRun(env, midnight('2026-05-01'), {
      onProgress: (p) => {
        progress.push(p);
      },
    });

    // then the ten others are billed once each, the failing one recorded, and its batch's other customer billed
    expect(run).toMatchObject({ status: 'failed', invoiceCount: 10, periodCount: 10 });
    expect(run.errors).toEqual([
      { customerId: failing?.customer_id, message: expect.stringContaining('has no pricing in EUR') },
    ]);
    const billed = ids.filter((id) => id !== failing?.customer_id);
    const rows = await written(env);
    expect(rows.customers).toEqual(billed);
    // and the numbers have no gap and no repeat (they follow the batches' commits)
    expect(rows.handles).toEqual(handles(10));
    expect(rows.entries).toEqual(numbers(10));
    expect(new Set(run.invoiceIds).size).toBe(10);
    // and progress is told for every customer, in id order, counting up
    expect(progress.map((p) => [p.customerId, p.customersDone])).toEqual(ids.map((id, n) => [id, n + 1]));

    // when the run is made again
    const again = await concurrentRun(env, midnight('2026-05-01'));

    // then nobody is billed twice
    expect(again).toMatchObject({ invoiceCount: 0, periodCount: 0 });
    expect((await written(env)).handles).toHaveLength(10);
  });

  it('stops handing out batches when interrupted, and the next run bills the rest once', async () => {
    // given twelve customers due in June (and the eleven above, billed for May, due again)
    const price = await f.createPrice(env, { pricing: { eur: { amount: 900 } } });
    const june = (await customers(env, 12, '2026-06-01', () => price.id)).sort();
    const before = (await written(env)).handles.length;

    // when the run is stopped once its first batch has been told
    const stop = new AbortController();
    const first = await concurrentRun(env, midnight('2026-06-01'), {
      signal: stop.signal,
      onProgress: ({ customersDone }) => {
        if (customersDone === 2) stop.abort();
      },
    });

    // then it ends interrupted with what its batches committed, and a second run bills the others
    expect(first.status).toBe('interrupted');
    expect(first.invoiceCount).toBeLessThan(22);
    const second = await concurrentRun(env, midnight('2026-06-01'));
    expect(second.status).not.toBe('interrupted');
    // each of the June customers once, the May ones (but the failing one) once more, numbers gapless
    const rows = await written(env);
    expect(first.invoiceCount + second.invoiceCount).toBe(rows.handles.length - before);
    expect(rows.customers.filter((id) => june.includes(id))).toEqual(june);
    expect(rows.handles).toEqual(handles(rows.handles.length));
    expect(rows.entries).toEqual(numbers(rows.handles.length));
    const repeated = await t.sql(
      `select subscription_item_id, period_start from billed_period where environment_id = $1
       group by 1, 2 having count(*) > 1`,
      [env.id],
    );
    expect(repeated).toEqual([]);
  });

  it("bills one batch at a time inside a caller's transaction, and only a test clock's customers on its clock", async () => {
    // given a test environment with three customers on a clock and three on none
    const test = await t.createEnvironment('Clocked', { kind: 'test' });
    const clock = (
      await t.graphql(
        `mutation ($input: TestClockCreateInput!) { testClockCreate(input: $input) { testClock { id } } }`,
        { input: { name: 'Clock', frozenTime: midnight('2026-07-01') } },
        { env: test },
      )
    ).body.data.testClockCreate.testClock;
    const price = await f.createPrice(test, { pricing: { eur: { amount: 300 } } });
    const clocked = (
      await customers(test, 3, '2026-07-01', () => price.id, { testClockId: clock.id })
    ).sort();
    await customers(test, 3, '2026-07-02', () => price.id);

    // when the clock's customers are billed concurrently
    const run = await concurrentRun(test, midnight('2026-07-01'), {
      triggeredBy: 'test_clock',
      testClockId: clock.id,
    });

    // then only they are billed
    expect(run).toMatchObject({ status: 'succeeded', invoiceCount: 3 });
    expect((await written(test)).customers).toEqual(clocked);

    // when the others are billed inside one transaction of the caller's, asking for three batches at once
    const ctx = createJobContext(t.orm.em.fork(), test.id, 'billingRun');
    const inside = await inEnvironment(ctx.em, test.id, (tx) =>
      new BillingRunService({ ...ctx, em: tx }).run(new Date(midnight('2026-07-02')), {
        triggeredBy: 'schedule',
        batchSize: 1,
        concurrency: 3,
      }),
    );

    // then they are billed one batch after another on that transaction, numbers gapless
    expect(inside).toMatchObject({ status: 'succeeded', invoiceCount: 3 });
    expect((await written(test)).handles).toEqual(handles(6));
  });
});

describe('a scheduled billing run helped by other processes', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment();
  });

  /** A helper of run `runId` in this process, as another process's `billing-run-help` job would be. */
  const helper = (runId: string) =>
    new BillingRunService(createJobContext(t.orm.em.fork(), env.id, 'billingRun')).help(runId, {
      batchSize: 2,
    });

  it('splits the customers between the run and its helper, each billed once, and the counts add up', async () => {
    // given twelve customers due
    const price = await f.createPrice(env, { pricing: { eur: { amount: 900 } } });
    const ids = (await customers(env, 12, '2026-05-01', () => price.id)).sort();

    // when the run asks a helper once it has started, and both bill batches of two
    let helped: Promise<number | null> = Promise.resolve(null);
    const told: string[] = [];
    const run = await scheduledRun(env, midnight('2026-05-01'), {
      batchSize: 2,
      invite: async (runId) => {
        helped = helper(runId);
      },
      onProgress: ({ customerId }) => {
        told.push(customerId);
      },
    });
    const helperDone = await helped;

    // then the run ended once its helper had, and counts what both billed
    expect(run).toMatchObject({
      status: 'succeeded',
      invoiceCount: 12,
      customersHandedOut: 12,
      customersDone: 12,
    });
    expect(helperDone).toBeGreaterThan(0);
    expect(told.length + (helperDone ?? 0)).toBe(12);
    // and every customer has one invoice, numbered without gaps, each in the run's list
    const rows = await written(env);
    expect(rows.customers).toEqual(ids);
    expect(rows.handles).toEqual(handles(12));
    expect(rows.entries).toEqual(numbers(12));
    const invoices = await t.sql<{ id: string }>('select id from invoice where environment_id = $1', [
      env.id,
    ]);
    expect([...run.invoiceIds].sort()).toEqual(invoices.map((row) => row.id).sort());

    // and a helper arriving once the run has ended leaves it alone
    expect(await helper(run.id)).toBeNull();
    expect((await written(env)).handles).toHaveLength(12);
  });

  it('ends interrupted when a helper dies with a batch handed out, and the next run bills that batch once', async () => {
    // given the twelve customers due again and six more, and the invoice numbers held by another
    // transaction, so that each batch stops at its end with its customers handed out
    const price = await f.createPrice(env, { pricing: { eur: { amount: 900 } } });
    await customers(env, 6, '2026-06-01', () => price.id);
    const holder = new pg.Client({ connectionString: t.databaseUrl });
    await holder.connect();
    let child: ChildProcess | undefined;
    try {
      await holder.query('begin');
      await holder.query(`select set_config('app.environment_id', $1, true)`, [env.id]);
      await holder.query('select 1 from invoice_numbering where environment_id = $1 for update', [env.id]);

      // when the run's helper is another process, killed while its batch waits
      const running = scheduledRun(env, midnight('2026-06-01'), {
        batchSize: 2,
        invite: async (runId) => {
          child = spawn(process.execPath, [CHILD, t.databaseUrl, env.id, 'help', runId, '2'], {
            stdio: 'ignore',
          });
        },
      });
      await until(async () => {
        const [run] = await t.sql<{ handed: number }>(
          `select customers_handed_out as handed from billing_run where environment_id = $1 and status = 'running'`,
          [env.id],
        );
        return (run?.handed ?? 0) >= 4;
      });
      if (!child) throw new Error('the run asked no helper');
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      await holder.query('commit');
      const run = await running;

      // then the run billed all but the helper's batch, and says so
      expect(run).toMatchObject({ status: 'interrupted', customersHandedOut: 18, customersDone: 16 });
      expect(run.invoiceCount).toBe(16);
      // and the next run bills those two, so that each customer is billed once for June, numbered without gaps
      const next = await scheduledRun(env, midnight('2026-06-01'));
      expect(next).toMatchObject({
        status: 'succeeded',
        invoiceCount: 2,
        customersHandedOut: 2,
        customersDone: 2,
      });
      const rows = await written(env);
      expect(rows.handles).toEqual(handles(30));
      expect(rows.entries).toEqual(numbers(30));
      const june = await t.sql<{ customers: number; periods: number }>(
        `select count(distinct i.customer_id)::int as customers, count(*)::int as periods
         from billed_period b join invoice i on i.id = b.invoice_id
         where b.environment_id = $1 and b.period_start = '2026-06-01'`,
        [env.id],
      );
      expect(june).toEqual([{ customers: 18, periods: 18 }]);
    } finally {
      child?.kill('SIGKILL');
      await holder.end();
    }
  }, 60_000);
});
