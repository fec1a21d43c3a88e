import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import { billingFixtures, midnight } from '../subscription/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = billingFixtures(t);

const CHILD = new URL('./billing-run-process.ts', import.meta.url).pathname;
const AS_OF = midnight('2026-03-01');
const CUSTOMERS = 5;

/** Starts a billing run in its own process, which pauses (hangs) after `pauseAfter` customers. */
function startRun(env: TestEnvironment, pauseAfter: number): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [CHILD, t.databaseUrl, env.id, AS_OF, String(pauseAfter)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  return { child, output: () => output };
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Waits for a condition on the database; the test fails on its own timeout if it never holds. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await sleep(20);
}

/**
 * PostgreSQL notices a killed client when its socket closes; the session's advisory lock goes with it.
 * Only this file's database counts: other files' requests take advisory locks of their own meanwhile.
 */
const lockReleased = async () =>
  (
    await t.sql(
      `select count(*)::int as count from pg_locks
       where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())`,
    )
  )[0]?.count === 0;

describe('a billing run killed part way (the process, with SIGKILL) and run again', () => {
  let env: TestEnvironment;

  beforeEach(async () => {
    // given five customers, each with an advance and an arrears item from Jan 1: on Mar 1, three
    // advance periods and two arrears periods are due for each
    env = await t.createEnvironment();
    const product = await f.createProduct(env, { handle: 'seats' });
    const advance = await f.createPrice(env, { name: 'Advance', pricing: { eur: { amount: 1000 } } });
    const arrears = await f.createPrice(env, {
      name: 'Arrears',
      method: 'arrears',
      pricing: { eur: { amount: 300 } },
    });
    for (let n = 0; n < CUSTOMERS; n += 1) {
      const customerId = await f.createCustomer(env, { name: `Customer ${n}` });
      await f.subscribe(env, {
        customerId,
        term: { start: '2026-01-01' },
        items: [
          { productId: product.id, priceId: advance.id },
          { productId: product.id, priceId: arrears.id },
        ],
      });
    }
  });

  /** Every (item, period) due is billed exactly once: in the ledger, and as an invoice line. */
  async function expectBilledExactlyOnce(): Promise<void> {
    const ledger = await t.sql(
      `select count(*)::int as rows, count(distinct (subscription_item_id, period_start))::int as periods
       from billed_period where environment_id = $1`,
      [env.id],
    );
    expect(ledger).toEqual([{ rows: CUSTOMERS * 5, periods: CUSTOMERS * 5 }]);
    const lines = await t.sql(
      `select i.customer_id, it.period_start::text, it.description, count(*)::int as lines
       from invoice_item it join invoice i on i.id = it.invoice_id
       where i.environment_id = $1 group by 1, 2, 3`,
      [env.id],
    );
    expect(lines).toHaveLength(CUSTOMERS * 5);
    expect(lines.every((line) => line.lines === 1)).toBe(true);
    const invoices = await t.sql(
      `select customer_id, count(*)::int as invoices, sum(total_excl_vat)::int as total,
         bool_and(status = 'booked') as booked
       from invoice where environment_id = $1 group by 1`,
      [env.id],
    );
    expect(invoices).toHaveLength(CUSTOMERS);
    for (const row of invoices) expect(row).toMatchObject({ invoices: 1, total: 3600, booked: true });
    const handles = await t.sql(`select handle from invoice where environment_id = $1 order by handle`, [
      env.id,
    ]);
    expect(handles.map((row) => row.handle)).toEqual(
      Array.from({ length: CUSTOMERS }, (_, n) => `INV-00000${n + 1}`),
    );
  }

  it('between two customers: the rerun bills the rest, and each period once', async () => {
    // when a run in another process has billed two customers, and is killed
    const run = startRun(env, 2);
    await until(async () => run.output().includes('paused'));
    await kill(run.child);

    // then two customers are billed completely, the others not at all, and the run still says running
    const billed = await t.sql(
      `select count(distinct customer_id)::int as customers from invoice where environment_id = $1`,
      [env.id],
    );
    expect(billed).toEqual([{ customers: 2 }]);
    const [killed] = await t.sql(
      'select id, status, invoice_count from billing_run where environment_id = $1',
      [env.id],
    );
    expect(killed).toMatchObject({ status: 'running', invoice_count: 2 });

    // when the run is made again, here
    await until(lockReleased);
    const rerun = await f.runBilling(env, AS_OF);

    // then it bills the three other customers, marks the killed run interrupted, and every period is billed once
    expect(rerun).toMatchObject({ status: 'succeeded', invoiceCount: 3, periodCount: 15 });
    expect(await f.billingRun(env, killed?.id as string)).toMatchObject({
      status: 'interrupted',
      invoiceCount: 2,
      finishedAt: expect.any(String),
    });
    await expectBilledExactlyOnce();
    expect(await f.runBilling(env, AS_OF)).toMatchObject({ invoiceCount: 0, periodCount: 0 });
  });

  it('inside a customer’s transaction: what it wrote for that customer is gone, and the rerun bills it once', async () => {
    // given the invoice number counter of the environment locked by another session, so that the run
    // stops while booking its first invoice, after writing that invoice and its lines
    await t.sql(
      `insert into invoice_numbering (environment_id, type, prefix, last_number) values ($1, 'invoice', 'INV-', 0)`,
      [env.id],
    );
    const blocker = new pg.Client({ connectionString: t.databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('begin');
      await blocker.query(`select * from invoice_numbering where environment_id = $1 for update`, [env.id]);

      // when a run in another process gets that far and is killed
      const run = startRun(env, 0);
      await until(
        async () =>
          (
            await t.sql(
              `select count(*)::int as count from pg_stat_activity
               where datname = current_database() and wait_event_type = 'Lock'`,
            )
          )[0]?.count === 1,
      );
      await kill(run.child);
    } finally {
      await blocker.query('rollback');
      await blocker.end();
    }

    // then nothing of that customer was kept
    const written = await t.sql(
      `select (select count(*)::int from invoice where environment_id = $1) as invoices,
              (select count(*)::int from billed_period where environment_id = $1) as periods`,
      [env.id],
    );
    expect(written).toEqual([{ invoices: 0, periods: 0 }]);

    // and a rerun bills everything, each period once
    await until(lockReleased);
    const rerun = await f.runBilling(env, AS_OF);
    expect(rerun).toMatchObject({ status: 'succeeded', invoiceCount: CUSTOMERS, periodCount: CUSTOMERS * 5 });
    await expectBilledExactlyOnce();
  });
});
