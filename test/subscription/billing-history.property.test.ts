import type { EntityManager } from '@mikro-orm/postgresql';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createJobContext, type RequestContext } from '../../src/context.ts';
import { addDays, daysBetween } from '../../src/dates/calendar.ts';
import { periodAt } from '../../src/dates/periods.ts';
import { inEnvironment, markRollbackOnly } from '../../src/db/tenant-transaction.ts';
import { BillingRunService } from '../../src/modules/billing/billing-run.service.ts';
import { InvoiceDraftService } from '../../src/modules/invoice/invoice-drafts.service.ts';
import { SubscriptionService } from '../../src/modules/subscription/subscription.service.ts';
import { Decimal } from '../../src/money/decimal.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { billingFixtures } from './fixtures.ts';

/*
 * Billed periods are never lost and never doubled (issue 14, item 7). Random histories of one
 * subscription (create, quantity and price changes, item removal, cancellation, billing runs, deleted
 * drafts and removed draft lines, all prorated) are run through the services, each in a transaction of
 * its own that is rolled back; then a last run bills everything due and the invoices are compared with
 * the days of service:
 * - every (item, day) of service is charged exactly once net of credits, and no day after an end;
 * - Σ charged per item = Σ (days × daily rate) within one minor unit per line;
 * - every run line names a billed period or proration line on the same invoice, and their amounts agree.
 * Bugs it found: a cancellation after an item's removal credited the removed item's unused days twice.
 * HISTORY_RUNS and HISTORY_DEBUG (no shrinking) are for running it by hand.
 */

const RUN = {
  seed: 20261125,
  numRuns: Number(process.env.HISTORY_RUNS ?? 500),
  endOnFailure: Boolean(process.env.HISTORY_DEBUG),
} as const;

const t = setupTestApp();
const f = billingFixtures(t);

/** Monthly prices billed in advance, in minor units a seat. */
const AMOUNTS = [1000, 2500] as const;
const MONTH = { unit: 'month' as const, count: 1 };

type Op =
  | { kind: 'advance'; days: number; run: boolean }
  | { kind: 'quantity'; item: number; quantity: number }
  | { kind: 'price'; item: number }
  | { kind: 'remove'; item: number }
  | { kind: 'cancel' }
  | { kind: 'deleteDraft'; pick: number }
  | { kind: 'removeLine'; pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      days: fc.integer({ min: 1, max: 45 }),
      run: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('quantity' as const),
      item: fc.nat(1),
      quantity: fc.integer({ min: 1, max: 5 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('price' as const), item: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), item: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteDraft' as const), pick: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('removeLine' as const), pick: fc.nat(20) }) },
);

const history: fc.Arbitrary<History> = fc.record({
  startOffset: fc.integer({ min: 0, max: 30 }),
  items: fc.array(fc.record({ price: fc.nat(1), quantity: fc.integer({ min: 1, max: 5 }) }), {
    minLength: 1,
    maxLength: 2,
  }),
  ops: fc.array(op, { minLength: 1, maxLength: 7 }),
});

type History = {
  startOffset: number;
  items: { price: number; quantity: number }[];
  ops: Op[];
};

/** What an item is in the model: from which day it bills which quantity at which amount, and its end. */
type ModelItem = {
  id: string;
  segments: { from: string; quantity: number; amount: number }[];
  end: string | null;
};

let env: TestEnvironment;
let customerId: string;
let productId: string;
let priceIds: string[];

beforeAll(async () => {
  env = await t.createEnvironment();
  customerId = await f.createCustomer(env, { collectionMode: 'draft_invoice' });
  productId = (await f.createProduct(env, { name: 'Seat' })).id;
  priceIds = [];
  for (const amount of AMOUNTS) {
    priceIds.push((await f.createPrice(env, { name: `P${amount}`, pricing: { eur: { amount } } })).id);
  }
});

const rows = <T>(tx: EntityManager, sql: string, params: unknown[]) => tx.execute<T[]>(sql, params);

/** Runs one history and checks the invoices it leaves; everything is rolled back afterwards. */
async function check(h: History): Promise<void> {
  await inEnvironment(t.orm.em, env.id, async (tx) => {
    markRollbackOnly(tx);
    const ctx = {
      ...createJobContext(tx, env.id, 'propertyTest'),
      token: undefined,
    } as unknown as RequestContext;
    const subscriptions = new SubscriptionService(ctx);
    const drafts = new InvoiceDraftService(ctx);
    const runs = new BillingRunService(ctx);
    const start = addDays('2026-01-01', h.startOffset);
    let now = start;
    const at = () => new Date(`${now}T10:00:00.000Z`);
    const subscription = await subscriptions.create({
      customerId,
      term: { start },
      items: h.items.map((item) => ({
        productId,
        priceId: priceIds[item.price] as string,
        quantity: String(item.quantity),
      })),
    });
    const created = await rows<{ id: string }>(
      tx,
      'select id from subscription_item where subscription_id = ? order by id',
      [subscription.id],
    );
    const model: ModelItem[] = created.map((row, index) => {
      const spec = h.items[index] as { price: number; quantity: number };
      return {
        id: row.id,
        end: null,
        segments: [{ from: start, quantity: spec.quantity, amount: AMOUNTS[spec.price] as number }],
      };
    });
    let cancelled = false;
    const live = () => model.filter((item) => item.end === null);
    const change = (item: ModelItem, to: { quantity?: number; amount?: number }) => {
      const last = item.segments.at(-1) as ModelItem['segments'][number];
      item.segments.push({
        from: now,
        quantity: to.quantity ?? last.quantity,
        amount: to.amount ?? last.amount,
      });
    };
    const draftIds = async () =>
      (
        await rows<{ id: string }>(
          tx,
          "select id from invoice where customer_id = ? and status = 'draft' order by id",
          [customerId],
        )
      ).map((row) => row.id);

    for (const step of h.ops) {
      const open = live();
      const target = open[('item' in step ? step.item : 0) % Math.max(open.length, 1)];
      switch (step.kind) {
        case 'advance':
          now = addDays(now, step.days);
          if (step.run) await runs.run(new Date(`${now}T00:00:00.000Z`), { triggeredBy: 'api' });
          break;
        case 'quantity':
          if (cancelled || !target) break;
          await subscriptions.update(subscription.id, {
            items: [{ id: target.id, quantity: String(step.quantity) }],
            at: at(),
          });
          change(target, { quantity: step.quantity });
          break;
        case 'price': {
          if (cancelled || !target) break;
          const last = target.segments.at(-1) as ModelItem['segments'][number];
          const next = last.amount === AMOUNTS[0] ? 1 : 0;
          await subscriptions.update(subscription.id, {
            items: [{ id: target.id, priceId: priceIds[next] }],
            at: at(),
          });
          change(target, { amount: AMOUNTS[next] });
          break;
        }
        case 'remove':
          if (cancelled || !target || open.length < 2) break;
          await subscriptions.update(subscription.id, { removeItemIds: [target.id], at: at() });
          target.end = now;
          break;
        case 'cancel':
          if (cancelled) break;
          await subscriptions.cancel(subscription.id, at(), 'create');
          cancelled = true;
          for (const item of open) item.end = now;
          break;
        case 'deleteDraft': {
          const ids = await draftIds();
          if (ids.length > 0) await drafts.delete(ids[step.pick % ids.length] as string);
          break;
        }
        case 'removeLine': {
          const lines = await rows<{ id: string }>(
            tx,
            "select i.id from invoice_item i join invoice v on v.id = i.invoice_id where v.customer_id = ? and v.status = 'draft' order by i.id",
            [customerId],
          );
          if (lines.length > 0)
            await drafts.removeItem((lines[step.pick % lines.length] as { id: string }).id);
          break;
        }
      }
    }
    // A last run bills every period started by the horizon and every proration line waiting.
    const horizon = now;
    await runs.run(new Date(`${horizon}T00:00:00.000Z`), { triggeredBy: 'api' });
    await verify(tx, model, horizon);
  });
}

/** The run lines on the customer's invoices, and what they charge. */
async function verify(tx: EntityManager, model: ModelItem[], horizon: string): Promise<void> {
  const lines = await rows<{
    invoice_id: string;
    amount: string;
    billed_period_id: string | null;
    proration_line_id: string | null;
  }>(
    tx,
    `select i.invoice_id, i.amount::text, i.billed_period_id, i.proration_line_id
       from invoice_item i join invoice v on v.id = i.invoice_id where v.customer_id = ?`,
    [customerId],
  );
  const periods = await rows<{
    id: string;
    item: string;
    period_start: string;
    period_end: string;
    amount: string;
    invoice_id: string | null;
  }>(
    tx,
    `select b.id, b.subscription_item_id as item, b.period_start::text, b.period_end::text, b.amount::text, b.invoice_id
       from billed_period b where b.subscription_item_id in (${model.map(() => '?').join(', ')}) and b.quantity <> 0`,
    model.map((item) => item.id),
  );
  const prorations = await rows<{
    id: string;
    item: string;
    kind: string;
    period_start: string;
    period_end: string;
    amount: string;
    invoice_id: string | null;
  }>(
    tx,
    `select id, subscription_item_id as item, kind, period_start::text, period_end::text, amount::text, invoice_id
       from proration_line where customer_id = ?`,
    [customerId],
  );
  // Every line names what it charges, on the same invoice, and the amounts agree.
  const sums = new Map<string, number>();
  for (const line of lines) {
    const ref = line.billed_period_id ?? line.proration_line_id;
    expect(ref, 'a run line names its billed period or proration line').not.toBeNull();
    const row = [...periods, ...prorations].find((candidate) => candidate.id === ref);
    expect(row?.invoice_id, 'the line is on the invoice its period names').toBe(line.invoice_id);
    sums.set(ref as string, (sums.get(ref as string) ?? 0) + Number(line.amount));
  }
  for (const row of [...periods, ...prorations]) {
    if (row.invoice_id)
      expect(sums.get(row.id) ?? 0, `lines of ${row.period_start}`).toBe(Number(row.amount));
    else expect(sums.has(row.id)).toBe(false);
  }

  for (const item of model) {
    const first = item.segments[0]?.from as string;
    // Advance billing: the last run bills every period that starts by the horizon, whole.
    let served = first;
    for (let n = 0; ; n += 1) {
      const period = periodAt(first, MONTH, n);
      if (!period || period.start > horizon) break;
      served = period.end;
    }
    const end = item.end && item.end < served ? item.end : served;
    const charged = [
      ...periods.filter((row) => row.item === item.id && row.invoice_id).map((row) => ({ ...row, sign: 1 })),
      ...prorations
        .filter((row) => row.item === item.id && row.invoice_id)
        .map((row) => ({ ...row, sign: row.kind === 'unused' ? -1 : 1 })),
    ];
    // Every day of service once, net of credits; none before the start or from the end on.
    const last = charged.reduce((max, row) => (row.period_end > max ? row.period_end : max), end);
    for (let day = addDays(first, -1); day < addDays(last, 1); day = addDays(day, 1)) {
      const net = charged
        .filter((row) => row.period_start <= day && day < row.period_end)
        .reduce((sum, row) => sum + row.sign, 0);
      expect(net, `item ${item.id} on ${day} (service ${first} to ${end})`).toBe(
        day >= first && day < end ? 1 : 0,
      );
    }
    // Σ charged = Σ days × daily rate, within a minor unit a line.
    let expected = new Decimal(0);
    for (let n = 0; ; n += 1) {
      const period = periodAt(first, MONTH, n);
      if (!period || period.start >= end) break;
      const days = daysBetween(period.start, period.end);
      for (let day = period.start; day < period.end && day < end; day = addDays(day, 1)) {
        const segment = item.segments
          .filter((candidate) => candidate.from <= day)
          .at(-1) as ModelItem['segments'][number];
        expected = expected.plus(new Decimal(segment.quantity * segment.amount).dividedBy(days));
      }
    }
    const total = charged.reduce((sum, row) => sum + Number(row.amount), 0);
    expect(
      Math.abs(total - expected.toNumber()),
      `Σ charged ${total} for ${expected.toFixed(2)}`,
    ).toBeLessThanOrEqual(charged.length);
  }
}

describe('billed periods are never lost and never doubled', () => {
  it('random histories of changes, cancellations, runs, deleted drafts and removed lines charge every day of service once', async () => {
    await fc.assert(fc.asyncProperty(history, check), RUN);
    // One rolled-back transaction a history, services called directly (no HTTP): 500 histories take
    // about 70 s beside the rest of the suite, over 180 s on a machine at load 10; the bound only stops
    // a hang, it measures nothing.
  }, 600_000);
});
