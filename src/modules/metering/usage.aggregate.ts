import type { EntityManager } from '@mikro-orm/postgresql';
import type { Period } from '../../dates/periods.ts';
import { Decimal } from '../../money/decimal.ts';
import { startOf } from '../subscription/subscription.cycle.ts';
import type { Subscription, SubscriptionItem } from '../subscription/subscription.entity.ts';
import type { BillableMetric } from './metering.entity.ts';

/** The events a metric aggregates for one customer over [from, to). */
export type UsageWindow = { customerId: string; from: Date; to: Date };

/** Decimals a quantity keeps when the metric does not round: the scale invoice lines and billed periods keep. */
export const QUANTITY_DECIMALS = 6;

/**
 * The condition on `usage_event` for a metric, a customer and a time range, and its parameters. The
 * range is on the partition key, so PostgreSQL reads only the partitions it overlaps.
 */
function eventsOf(
  environmentId: string,
  metric: BillableMetric,
  customerId: string,
  range: 'window' | 'before',
  window: UsageWindow,
): { where: string; params: unknown[] } {
  const time = range === 'window' ? 'timestamp >= ? and timestamp < ?' : 'timestamp < ?';
  const times = range === 'window' ? [window.from, window.to] : [window.from];
  const filtered = Object.keys(metric.filters).length > 0;
  return {
    where: `environment_id = ? and metric_id = ? and customer_id = ? and ${time}${filtered ? ' and properties @> ?::jsonb' : ''}`,
    params: [
      environmentId,
      metric.id,
      customerId,
      ...times,
      ...(filtered ? [JSON.stringify(metric.filters)] : []),
    ],
  };
}

/** The SQL (one statement answering `value`) of each aggregation over the window. */
export function aggregationQuery(
  environmentId: string,
  metric: BillableMetric,
  window: UsageWindow,
): { sql: string; params: unknown[] } {
  const inWindow = eventsOf(environmentId, metric, window.customerId, 'window', window);
  const from = `usage_event where ${inWindow.where}`;
  switch (metric.aggregation) {
    case 'count':
      return { sql: `select count(*)::text as value from ${from}`, params: inWindow.params };
    case 'sum':
      return { sql: `select coalesce(sum(value), 0)::text as value from ${from}`, params: inWindow.params };
    case 'max':
      return { sql: `select coalesce(max(value), 0)::text as value from ${from}`, params: inWindow.params };
    case 'unique_count':
      return {
        sql: `select count(distinct properties ->> ?)::text as value from ${from}`,
        params: [metric.fieldName, ...inWindow.params],
      };
    case 'latest':
      return {
        sql: `select coalesce((select value from ${from} order by timestamp desc, created_at desc, id desc limit 1), 0)::text as value`,
        params: inWindow.params,
      };
    case 'weighted_sum': {
      // Each event's value changes the level (+3 seats, -1 seat); the level carried into the window is
      // the sum of every earlier event. The result is the level's average over the window, weighted by
      // how long each level held.
      const before = eventsOf(environmentId, metric, window.customerId, 'before', window);
      return {
        sql: `with carried as (select coalesce(sum(value), 0) as level from usage_event where ${before.where}),
          steps as (
            select timestamp as at,
              lead(timestamp, 1, ?::timestamptz) over (order by timestamp, id) as until,
              (select level from carried) + sum(value) over (order by timestamp, id rows unbounded preceding) as level
            from ${from})
          select (
            (select level from carried)
              * extract(epoch from (coalesce((select min(at) from steps), ?::timestamptz) - ?::timestamptz))
            + coalesce((select sum(level * extract(epoch from (until - at))) from steps), 0)
          ) / extract(epoch from (?::timestamptz - ?::timestamptz)) as value`,
        params: [
          ...before.params,
          window.to,
          ...inWindow.params,
          window.to,
          window.from,
          window.to,
          window.from,
        ],
      };
    }
  }
}

/** Rounds an aggregated value by the metric's rule (to QUANTITY_DECIMALS places when it has none). */
export function roundQuantity(metric: BillableMetric, value: string): string {
  const decimal = new Decimal(value);
  const places = metric.rounding === 'none' ? QUANTITY_DECIMALS : metric.roundingDecimals;
  const mode =
    metric.rounding === 'ceil'
      ? Decimal.ROUND_CEIL
      : metric.rounding === 'floor'
        ? Decimal.ROUND_FLOOR
        : Decimal.ROUND_HALF_UP;
  return decimal.toDecimalPlaces(places, mode).toFixed();
}

/** The metric's value for a customer over [from, to), rounded by its rule. */
export async function aggregateUsage(
  em: EntityManager,
  environmentId: string,
  metric: BillableMetric,
  window: UsageWindow,
): Promise<string> {
  const { sql, params } = aggregationQuery(environmentId, metric, window);
  const [row] = await em.execute<{ value: string | null }[]>(sql, params);
  return roundQuantity(metric, row?.value ?? '0');
}

/** The instants a period of the subscription runs over: from local midnight of its start to that of its end. */
export const windowOf = (subscription: Subscription, period: Period) => ({
  from: startOf(subscription, period.start),
  to: startOf(subscription, period.end),
});

/**
 * What an event-based item bills for a period: its metric aggregated over the customer's events (not
 * below zero), or,
 * for an item without a metric, the sum of its usage records (as before metering).
 */
export async function usageQuantity(
  em: EntityManager,
  environmentId: string,
  subscription: Subscription,
  item: SubscriptionItem,
  period: Period,
  metric: BillableMetric | null,
): Promise<string> {
  const { from, to } = windowOf(subscription, period);
  if (metric) {
    const value = await aggregateUsage(em, environmentId, metric, {
      customerId: subscription.customerId,
      from,
      to,
    });
    // A sum or weighted sum of decrements can net out below zero; that bills as nothing.
    return Decimal.max(value, 0).toFixed();
  }
  const [row] = await em.execute<{ total: string }[]>(
    `select coalesce(sum(quantity), 0)::text as total from usage_record
     where environment_id = ? and subscription_item_id = ? and occurred_at >= ? and occurred_at < ?`,
    [environmentId, item.id, from, to],
  );
  return new Decimal(row?.total ?? 0).toFixed();
}
