import { beforeAll, describe, expect, it } from 'vitest';
import { StatementRecorder } from '../../bench/statements.ts';
import { createJobContext } from '../../src/context.ts';
import {
  BILLING_BATCH,
  type BillingRunProgress,
  BillingRunService,
} from '../../src/modules/billing/billing-run.service.ts';
import { billingFixtures, midnight } from '../subscription/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = billingFixtures(t);

/** A run as the job queue makes it: batches of customers, each its own transaction. */
async function scheduledRun(
  env: TestEnvironment,
  asOf: string,
  onProgress?: (p: BillingRunProgress) => void,
) {
  const ctx = createJobContext(t.orm.em.fork(), env.id, 'billingRun');
  return new BillingRunService(ctx).run(new Date(asOf), { triggeredBy: 'schedule', onProgress });
}

/** `count` customers, in id order, each with a monthly advance subscription from `start` on `priceId`. */
async function customers(env: TestEnvironment, count: number, start: string, priceId: (n: number) => string) {
  const product = await f.createProduct(env, { handle: `seats-${start}` });
  const ids: string[] = [];
  for (let n = 0; n < count; n += 1) {
    const customerId = await f.createCustomer(env, { name: `Customer ${n}` });
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
    const losing = await f.createPrice(env, { name: 'Losing', pricing: { eur: { amount: 700 } } });
    const ids = await customers(env, 5, '2026-05-01', (n) => (n === 2 ? losing.id : good.id));
    const put = {
      name: 'Losing',
      termUnit: 'month',
      termCount: 1,
      priceModel: 'fee',
      pricing: { usd: { amount: 1 } },
    };
    expect((await t.rest('PUT', `/prices/${losing.id}`, { env, body: put })).status).toBe(200);
    expect(ids.length).toBeLessThan(BILLING_BATCH);

    // when the scheduled run bills them
    const progress: BillingRunProgress[] = [];
    const run = await scheduledRun(env, midnight('2026-05-01'), (p) => {
      progress.push(p);
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
    // the lock's transaction, the run's start and finish, the batch and the look for a next one
    expect(once(/^begin/)).toBeLessThanOrEqual(5);
  });
});
