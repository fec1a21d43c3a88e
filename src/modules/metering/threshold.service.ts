import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../../context.ts';
import type { Period } from '../../dates/periods.ts';
import { DomainError } from '../../errors.ts';
import { Decimal } from '../../money/decimal.ts';
import { recordEvent } from '../event/event.service.ts';
import { PriceSchema } from '../price/price.entity.ts';
import { isBillable, itemPeriod, periodIndexAt } from '../subscription/subscription.cycle.ts';
import { SubscriptionItemSchema, SubscriptionSchema } from '../subscription/subscription.entity.ts';
import {
  BillableMetricSchema,
  type ThresholdKind,
  type UsageThreshold,
  UsageThresholdSchema,
} from './metering.entity.ts';
import { usageQuantity } from './usage.aggregate.ts';
import { amountOf } from './usage.service.ts';

export type ThresholdCreateInput = { subscriptionItemId: string; kind: ThresholdKind; value: number };

/** The largest threshold value (numeric(21, 6) holds 15 integer digits). */
const MAX_VALUE = 1e15;

/** Usage thresholds of metered subscription items. */
export class UsageThresholdService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  list(subscriptionItemId: string): Promise<UsageThreshold[]> {
    return this.ctx.em.find(
      UsageThresholdSchema,
      { environmentId: this.ctx.environmentId, subscriptionItemId },
      { orderBy: { id: 'asc' } },
    );
  }

  async create(input: ThresholdCreateInput): Promise<UsageThreshold> {
    const { em, environmentId } = this.ctx;
    if (!Number.isFinite(input.value) || input.value <= 0 || input.value >= MAX_VALUE) {
      throw DomainError.onField('INVALID_INPUT', ['value'], 'must be greater than 0 and below 10^15');
    }
    if (input.kind === 'amount' && !Number.isInteger(input.value)) {
      throw DomainError.onField('INVALID_INPUT', ['value'], 'an amount is whole minor units');
    }
    const item = await em.findOne(SubscriptionItemSchema, { id: input.subscriptionItemId, environmentId });
    if (!item) throw DomainError.notFound('Subscription item', input.subscriptionItemId);
    if (item.method !== 'event_based' || !item.billableMetricId) {
      throw DomainError.onField(
        'INVALID_REFERENCE',
        ['subscriptionItemId'],
        'thresholds are set on event-based items that bill a metric',
      );
    }
    const threshold = em.create(UsageThresholdSchema, {
      environmentId,
      subscriptionItemId: item.id,
      kind: input.kind,
      value: new Decimal(input.value).toFixed(6),
    });
    await em.flush();
    return threshold;
  }
}

/** An event just stored: whose, of which metric, when. */
export type StoredEvent = { customerId: string; metricId: string; timestamp: Date };

/**
 * After a batch stored `events`: the thresholds of the items those events count for, whose period the
 * events fall in reached the threshold, emit `usage_threshold.crossed` — once per threshold and period.
 *
 * The thresholds are locked for update first, so concurrent batches for the same items take turns
 * here: each aggregates after the previous one committed (read committed: a statement sees what was
 * committed before it started), so together they cannot step over a threshold unseen, and the
 * crossing's primary key makes the event once.
 */
export async function checkThresholds(
  em: EntityManager,
  environmentId: string,
  events: readonly StoredEvent[],
): Promise<void> {
  if (events.length === 0) return;
  const locked = await em.execute<{ id: string }[]>(
    `select t.id from usage_threshold t
       join subscription_item si on si.id = t.subscription_item_id
       join subscription s on s.id = si.subscription_id
     where t.environment_id = ?
       and si.billable_metric_id = any(array(select jsonb_array_elements_text(?::jsonb))::uuid[])
       and s.customer_id = any(array(select jsonb_array_elements_text(?::jsonb))::uuid[])
     order by t.id for update of t`,
    [
      environmentId,
      JSON.stringify([...new Set(events.map((event) => event.metricId))]),
      JSON.stringify([...new Set(events.map((event) => event.customerId))]),
    ],
  );
  if (locked.length === 0) return;
  const thresholds = await em.find(
    UsageThresholdSchema,
    { environmentId, id: { $in: locked.map((row) => row.id) } },
    { orderBy: { id: 'asc' } },
  );
  const items = await em.find(SubscriptionItemSchema, {
    environmentId,
    id: { $in: [...new Set(thresholds.map((threshold) => threshold.subscriptionItemId))] },
  });
  const itemById = new Map(items.map((item) => [item.id, item]));
  const [subscriptions, prices, metrics, crossed] = await Promise.all([
    em.find(SubscriptionSchema, { environmentId, id: { $in: items.map((item) => item.subscriptionId) } }),
    em.find(PriceSchema, { environmentId, id: { $in: items.map((item) => item.priceId) } }),
    em.find(BillableMetricSchema, {
      environmentId,
      id: { $in: items.flatMap((item) => (item.billableMetricId ? [item.billableMetricId] : [])) },
    }),
    em.execute<{ threshold_id: string; period_start: string }[]>(
      `select threshold_id, period_start::text from usage_threshold_crossing
       where threshold_id = any(array(select jsonb_array_elements_text(?::jsonb))::uuid[])`,
      [JSON.stringify(thresholds.map((threshold) => threshold.id))],
    ),
  ]);
  const subscriptionById = new Map(subscriptions.map((subscription) => [subscription.id, subscription]));
  const priceById = new Map(prices.map((price) => [price.id, price]));
  const metricById = new Map(metrics.map((metric) => [metric.id, metric]));
  const done = new Set(crossed.map((row) => `${row.threshold_id} ${row.period_start}`));
  // One aggregation per item and period, however many thresholds it has.
  const usage = new Map<string, Promise<{ quantity: string; amount: number }>>();

  for (const threshold of thresholds) {
    const item = itemById.get(threshold.subscriptionItemId);
    const subscription = item && subscriptionById.get(item.subscriptionId);
    const price = item && priceById.get(item.priceId);
    const metric = item?.billableMetricId ? metricById.get(item.billableMetricId) : undefined;
    if (!item || !subscription || !price || !metric) continue;
    const periods = new Map<string, Period>();
    for (const event of events) {
      if (event.customerId !== subscription.customerId || event.metricId !== metric.id) continue;
      const index = periodIndexAt(subscription, item, event.timestamp);
      if (index < 0 || !isBillable(subscription, item, index)) continue;
      const period = itemPeriod(subscription, item, index);
      if (period) periods.set(period.start, period);
    }
    for (const period of periods.values()) {
      if (done.has(`${threshold.id} ${period.start}`)) continue;
      const key = `${item.id} ${period.start}`;
      let reading = usage.get(key);
      if (!reading) {
        reading = usageQuantity(em, environmentId, subscription, item, period, metric).then((quantity) => ({
          quantity,
          amount: amountOf(subscription, price, quantity),
        }));
        usage.set(key, reading);
      }
      const { quantity, amount } = await reading;
      const reached =
        threshold.kind === 'usage'
          ? new Decimal(quantity).gte(threshold.value)
          : new Decimal(amount).gte(threshold.value);
      if (!reached) continue;
      const inserted = await em.execute<{ threshold_id: string }[]>(
        `insert into usage_threshold_crossing
           (environment_id, threshold_id, period_start, period_end, quantity, amount)
         values (?, ?, ?, ?, ?, ?) on conflict do nothing returning threshold_id`,
        [environmentId, threshold.id, period.start, period.end, quantity, amount],
      );
      if (inserted.length === 0) continue;
      recordEvent(em, environmentId, {
        type: 'usage_threshold.crossed',
        objectType: 'usage_threshold',
        objectId: threshold.id,
        data: {
          threshold: {
            id: threshold.id,
            subscriptionItemId: item.id,
            kind: threshold.kind,
            value: Number(threshold.value),
          },
          subscriptionId: subscription.id,
          customerId: subscription.customerId,
          metricCode: metric.code,
          periodStart: period.start,
          periodEnd: period.end,
          quantity: Number(quantity),
          amount,
          currency: subscription.currency,
        },
      });
    }
  }
  await em.flush();
}
