import { describe, expect, it } from 'vitest';
import { StatementRecorder } from '../../bench/statements.ts';
import { createJobContext } from '../../src/context.ts';
import { BillingRunService } from '../../src/modules/billing/billing-run.service.ts';
import { balanceFixtures } from '../balance/balance-fixtures.ts';
import { evenlyDeferringAccountSet } from '../ledger/account-sets.ts';
import { billingFixtures, midnight } from '../subscription/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = billingFixtures(t);
const balances = balanceFixtures(t);

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const INSTANT = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})/g;

/** Rows with their ids named by order of first appearance and their instants blanked: comparable across environments. */
function comparable(rows: unknown[]): unknown {
  const names = new Map<string, string>();
  const text = JSON.stringify(rows)
    .replace(UUID, (id) => {
      if (!names.has(id)) names.set(id, `id${names.size}`);
      return names.get(id) as string;
    })
    .replace(INSTANT, 'instant');
  return JSON.parse(text);
}

/** Three customers, each with a monthly subscription of two items from 2026-05-01 (one with 3 seats). */
async function setUp(env: TestEnvironment) {
  const product = await f.createProduct(env, { handle: 'seats' });
  const price = await f.createPrice(env, { pricing: { eur: { amount: 1250 } } });
  for (let n = 0; n < 3; n += 1) {
    const customerId = await f.createCustomer(env, { name: `Customer ${n}` });
    await f.subscribe(env, {
      customerId,
      handle: `subscription-${n}`,
      term: { start: '2026-05-01' },
      items: [
        { productId: product.id, priceId: price.id },
        { productId: product.id, priceId: price.id, quantity: 3 },
      ],
    });
  }
}

/** Everything a run writes about its invoices, in a form two environments can be compared in. */
async function written(env: TestEnvironment) {
  const q = (text: string) => t.sql(text, [env.id]);
  return comparable([
    await q(`select i.handle, i.status, i.currency, i.date, i.due_date, i.total_excl_vat, i.total_incl_vat,
               i.settled_amount, i.settlement_status, i.customer_snapshot, i.seller_snapshot, c.name
             from invoice i join customer c on c.id = i.customer_id where i.environment_id = $1 order by i.handle`),
    await q(`select v.handle, it.title, it.description, it.quantity, it.unit_amount, it.amount, it.tax_amount,
               it.period_start, it.period_end, it.billed_period_id is not null as billed
             from invoice_item it join invoice v on v.id = it.invoice_id
             where it.environment_id = $1 order by v.handle, it.period_start, it.amount`),
    await q(`select action, object_type, changed_fields, count(*)::int as count from audit_event
             where environment_id = $1 and object_type not in ('Customer', 'Product', 'Price', 'BillingRun')
             group by 1, 2, 3 order by 1, 2, changed_fields::text`),
    await q(`select e.type, e.data from event e where e.environment_id = $1
               and e.type in ('invoice.created', 'invoice.booked')
             order by e.type, e.data->>'number', e.data->'customer'->>'name', e.data->>'date'`),
    await q(`select j.number, j.kind, j.date, l.amount, a.name from journal_entry j
             join journal_line l on l.entry_id = j.id join ledger_account a on a.id = l.account_id
             where j.environment_id = $1 order by j.number, l.amount, a.name`),
    await q(`select c.name, b.currency, b.amount from customer_balance b join customer c on c.id = b.customer_id
             where b.environment_id = $1 order by c.name`),
    await q(`select c.name, b.type, b.amount from balance_transaction b join customer c on c.id = b.customer_id
             where b.environment_id = $1 order by c.name, b.type, b.amount`),
    await q(`select v.handle, s.date, s.amount, s.reference, s.note from settlement s join invoice v on v.id = s.invoice_id
             where s.environment_id = $1 order by v.handle, s.amount`),
    await q(`select v.handle, r.date, r.amount from recognition_row r join invoice v on v.id = r.invoice_id
             where r.environment_id = $1 order by v.handle, r.date, r.amount`),
    await q(`select s.handle, s.status, s.term_start, s.term_end, s.cancelled_at, s.updated_at is not null as updated
             from subscription s where s.environment_id = $1 order by s.handle`),
    await q(`select s.handle, i.quantity, i.period_index, i.bill_at from subscription_item i
             join subscription s on s.id = i.subscription_id where i.environment_id = $1
             order by s.handle, i.quantity, i.id`),
    await q(`select s.handle, b.period_start, b.period_end, b.quantity, b.amount, v.handle as invoice,
               exists (select 1 from invoice_item it where it.billed_period_id = b.id) as on_line
             from billed_period b join subscription_item i on i.id = b.subscription_item_id
             join subscription s on s.id = i.subscription_id left join invoice v on v.id = b.invoice_id
             where b.environment_id = $1 order by s.handle, b.period_start, i.quantity, b.amount`),
  ]);
}

/** Bills the environment as of `day` as the scheduler does (its batches: markBatch); the run and the statements it sent. */
async function scheduledRun(env: TestEnvironment, day: string) {
  const recorder = new StatementRecorder();
  let run: Awaited<ReturnType<BillingRunService['run']>> | undefined;
  try {
    const statements = await recorder.during(async () => {
      const ctx = createJobContext(t.orm.em.fork(), env.id, 'billingRun');
      run = await new BillingRunService(ctx).run(new Date(midnight(day)), { triggeredBy: 'schedule' });
    });
    return { run, statements };
  } finally {
    recorder.restore();
  }
}

/** Bills the environment as of `day` through billingRunCreate (the request's one transaction); the run and the statements it sent. */
async function requestedRun(env: TestEnvironment, day: string) {
  const recorder = new StatementRecorder();
  let run: Awaited<ReturnType<typeof f.runBilling>> | undefined;
  try {
    const statements = await recorder.during(async () => {
      run = await f.runBilling(env, midnight(day));
    });
    return { run, statements };
  } finally {
    recorder.restore();
  }
}

/** The statements that inserted invoices: one per set-based write, one per invoice booked invoice by invoice. */
const invoiceInserts = (sent: string[]) =>
  sent.filter((statement) => /insert into "invoice" \(/.test(statement));

/**
 * Six customers with a monthly subscription from 2026-05-01, billed for May (through a request) and
 * then made, in id order: plain; with a credit balance (an over-settled invoice); plain; with a
 * subscription cancelled on 15 May with its credit prorated (June bills only that credit: a negative
 * total); with a product whose revenue is deferred (its own account set); plain.
 */
async function setUpMixed(env: TestEnvironment) {
  const seats = await f.createProduct(env, { handle: 'seats' });
  const support = await f.createProduct(env, { name: 'Support', handle: 'support' });
  const price = await f.createPrice(env, { pricing: { eur: { amount: 3100 } } });
  const accountSetId = await evenlyDeferringAccountSet(t, env);
  await balances.gql(
    env,
    'mutation ($productId: UUID!, $accountSetId: UUID) { productAccountSetSet(productId: $productId, accountSetId: $accountSetId) { userErrors { message } } }',
    { productId: support.id, accountSetId },
  );
  const customers: string[] = [];
  const subscriptions: string[] = [];
  for (const [n, product] of [seats, seats, seats, seats, support, seats].entries()) {
    const customerId = await f.createCustomer(env, { name: `Customer ${n}` });
    const subscription = await f.subscribe(env, {
      customerId,
      handle: `subscription-${n}`,
      term: { start: '2026-05-01' },
      items: [{ productId: product.id, priceId: price.id, quantity: 2 }],
    });
    customers.push(customerId);
    subscriptions.push(subscription.id);
  }
  await f.runBilling(env, midnight('2026-05-01'));
  const overpaid = await balances.bookedInvoice(env, customers[1] as string, [1000]);
  expect((await balances.settle(env, overpaid.id, 5000)).userErrors).toEqual([]);
  const cancel = await f.tryCancel(env, subscriptions[3] as string, midnight('2026-05-15'), {
    proration: 'create',
  });
  expect(cancel.userErrors).toEqual([]);
}

describe("a scheduled run's batch writes what a run in a request writes", () => {
  it('drafts and books each invoice without savepoints, with the same invoices, audit rows, events and journal', async () => {
    // given two environments set up alike (the same name: the seller's legal name)
    const scheduled = await t.createEnvironment('Alike');
    const requested = await t.createEnvironment('Alike');
    await setUp(scheduled);
    await setUp(requested);

    // when one is billed by the scheduled run (a batch: markBatch) and the other through billingRunCreate
    // (the request's transaction, each invoice's draft and booking in a savepoint of its own)
    const { run, statements } = await scheduledRun(scheduled, '2026-06-01');
    const { run: viaRequest, statements: requestStatements } = await requestedRun(requested, '2026-06-01');

    // then both billed three invoices
    expect(run).toMatchObject({ status: 'succeeded', invoiceCount: 3 });
    expect(viaRequest).toMatchObject({ status: 'succeeded', invoiceCount: 3 });
    // and the batch took no savepoint, where the request's run took one for each draft and each booking
    const savepoints = (sent: string[]) => sent.filter((statement) => /^savepoint/i.test(statement)).length;
    expect(savepoints(statements)).toBe(0);
    expect(savepoints(requestStatements)).toBeGreaterThanOrEqual(6);
    // and wrote its three invoices in one statement, where the request's run wrote one each
    expect(invoiceInserts(statements)).toHaveLength(1);
    expect(invoiceInserts(requestStatements)).toHaveLength(3);
    // and wrote the same rows: invoices, lines, audit events, events, journal, balances, subscriptions,
    // items and billed periods
    const rows = await written(scheduled);
    expect(rows).toEqual(await written(requested));
    const [invoices, , audits] = rows as [unknown[], unknown[], unknown[]];
    expect(invoices).toHaveLength(3);
    expect(audits).toContainEqual({
      action: 'update',
      object_type: 'Invoice',
      changed_fields: ['bookedAt', 'customerSnapshot', 'handle', 'sellerSnapshot', 'status', 'updatedAt'],
      count: 3,
    });
  });

  it("writes plain customers' billed periods, items' next bills and subscriptions' ends with their invoices", async () => {
    // given two environments set up alike, billed for May through billingRunCreate (the ledger's accounts
    // exist), with a fourth customer whose subscription ends on 1 June
    const setUpBilled = async (env: TestEnvironment) => {
      await setUp(env);
      const product = await f.createProduct(env, { handle: 'ending' });
      const price = await f.createPrice(env, { pricing: { eur: { amount: 700 } } });
      const customerId = await f.createCustomer(env, { name: 'Customer ending' });
      await f.subscribe(env, {
        customerId,
        handle: 'subscription-ending',
        term: { start: '2026-05-01', end: '2026-06-01' },
        items: [{ productId: product.id, priceId: price.id }],
      });
      await f.runBilling(env, midnight('2026-05-01'));
    };
    const scheduled = await t.createEnvironment('Alongside');
    const requested = await t.createEnvironment('Alongside');
    await setUpBilled(scheduled);
    await setUpBilled(requested);

    // when June is billed by the scheduled run and through billingRunCreate
    const { run, statements } = await scheduledRun(scheduled, '2026-06-01');
    const { statements: requestStatements } = await requestedRun(requested, '2026-06-01');

    // then the batch wrote the billed periods, the items' and the subscriptions' changes in its set-based
    // write, where the request's run flushed them through its unit of work
    expect(run).toMatchObject({ status: 'succeeded', invoiceCount: 3, endedCount: 1 });
    const sent = (pattern: RegExp, list: string[]) => list.filter((statement) => pattern.test(statement));
    for (const pattern of [
      /^insert into "billed_period"/,
      /^update "subscription_item"/,
      /^update "subscription"/,
    ]) {
      expect(sent(pattern, statements)).toEqual([]);
      expect(sent(pattern, requestStatements).length).toBeGreaterThan(0);
    }
    expect(invoiceInserts(statements)).toHaveLength(1);
    // (the items' changes as one update of many rows)
    expect(sent(/ as \(update "subscription_item" set .* from \(values /, statements)).toHaveLength(1);
    // and the same rows, their audit events included
    const rows = await written(scheduled);
    expect(rows).toEqual(await written(requested));
    const [, , audits] = rows as unknown[][];
    const [subscriptions, items, periods] = (rows as unknown[][]).slice(-3);
    expect(subscriptions).toContainEqual(
      expect.objectContaining({ handle: 'subscription-ending', status: 'ended' }),
    );
    expect(items).toHaveLength(7);
    expect(periods?.length).toBeGreaterThanOrEqual(12);
    expect(audits).toContainEqual(expect.objectContaining({ action: 'create', object_type: 'BilledPeriod' }));
    expect(audits).toContainEqual(expect.objectContaining({ action: 'update', object_type: 'Subscription' }));
    expect(audits).toContainEqual(
      expect.objectContaining({ action: 'update', object_type: 'SubscriptionItem' }),
    );
  });

  it('books plain invoices set-based and the others invoice by invoice, in one batch, with the same rows', async () => {
    // given two environments set up alike with plain customers and each special case between them
    const scheduled = await t.createEnvironment('Mixed');
    const requested = await t.createEnvironment('Mixed');
    await setUpMixed(scheduled);
    await setUpMixed(requested);

    // when June is billed by the scheduled run in one batch, and through billingRunCreate
    const { run, statements } = await scheduledRun(scheduled, '2026-06-01');
    const viaRequest = await f.runBilling(requested, midnight('2026-06-01'));

    // then both billed six invoices
    expect(run).toMatchObject({ status: 'succeeded', invoiceCount: 6 });
    expect(viaRequest).toMatchObject({ status: 'succeeded', invoiceCount: 6 });
    // and the batch wrote the plain ones set-based (three writes: the pending ones go before each
    // special customer's, so numbers follow the customers' order) and the three others one by one
    expect(invoiceInserts(statements)).toHaveLength(6);
    expect(invoiceInserts(statements).filter((statement) => /^with /.test(statement))).toHaveLength(3);
    // and wrote the same rows, the special cases' balances, settlements and schedules included
    const rows = await written(scheduled);
    expect(rows).toEqual(await written(requested));
    const [, , , , , customerBalances, movements, settlements, schedules] = rows as unknown[][];
    expect(customerBalances).toHaveLength(6);
    expect(movements).toContainEqual(expect.objectContaining({ name: 'Customer 1', type: 'applied' }));
    expect(movements).toContainEqual(expect.objectContaining({ name: 'Customer 3', type: 'invoice_credit' }));
    expect(settlements).toContainEqual(expect.objectContaining({ note: 'Credited to the customer balance' }));
    expect(schedules?.length).toBeGreaterThan(0);
  });

  it('bills a batch whose block of numbers collides invoice by invoice, failing the customers as a request does', async () => {
    // given two environments, each with three plain customers and its numbering counter set back
    // below a number already used (a booked invoice INV-000001, the counter at 0)
    const setBack = async (env: TestEnvironment) => {
      await setUp(env);
      const [customer] = await t.sql<{ id: string }>(
        'select id from customer where environment_id = $1 order by id limit 1',
        [env.id],
      );
      await balances.bookedInvoice(env, customer?.id as string, [100]);
      await t.sql(
        "update invoice_numbering set last_number = 0 where environment_id = $1 and type = 'invoice'",
        [env.id],
      );
    };
    const scheduled = await t.createEnvironment('Collides');
    const requested = await t.createEnvironment('Collides');
    await setBack(scheduled);
    await setBack(requested);

    // when both are billed, by the scheduled run and through billingRunCreate
    const { run, statements } = await scheduledRun(scheduled, '2026-06-01');
    const viaRequest = await f.runBilling(requested, midnight('2026-06-01'));

    // then the batch's set-based write was tried, refused, and the batch billed again invoice by invoice,
    // which names each customer whose number collided, as the request's run does (a batch after a failed
    // customer tries set-based again)
    expect(invoiceInserts(statements).filter((statement) => /^with /.test(statement)).length).toBeGreaterThan(
      0,
    );
    const errorsOf = async (errors: { customerId: string; message: string }[]) =>
      Promise.all(
        errors.map(async ({ customerId, message }) => {
          const [customer] = await t.sql<{ name: string }>('select name from customer where id = $1', [
            customerId,
          ]);
          return { name: customer?.name, message };
        }),
      );
    expect(run?.status).toBe(viaRequest.status);
    expect(run?.errors.length).toBeGreaterThan(0);
    expect(await errorsOf(run?.errors ?? [])).toEqual(await errorsOf(viaRequest.errors));
    expect(await written(scheduled)).toEqual(await written(requested));
  });
});
