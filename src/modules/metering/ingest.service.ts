import type { EntityManager } from '@mikro-orm/postgresql';
import { validate as isUuid } from 'uuid';
import type { RequestContext } from '../../context.ts';
import { newId } from '../../db/ids.ts';
import { DomainError } from '../../errors.ts';
import { Decimal } from '../../money/decimal.ts';
import { parseInput } from '../../validation.ts';
import { isBillable, itemPeriod, periodIndexAt } from '../subscription/subscription.cycle.ts';
import { SubscriptionItemSchema, SubscriptionSchema } from '../subscription/subscription.entity.ts';
import { type BillableMetric, BillableMetricSchema } from './metering.entity.ts';
import { UsageEventBatchInput, UsageEventInput } from './metering.input.ts';
import { effectiveMeteringSettings } from './metering-settings.service.ts';
import { checkThresholds } from './threshold.service.ts';

/** How far ahead of the server's clock an event's timestamp may be. */
export const FUTURE_TOLERANCE_MS = 24 * 60 * 60 * 1000;
/** Events before this are refused as invalid (no partition is made for them). */
const EARLIEST_EVENT = Date.UTC(2000, 0, 1);

export const EVENT_STATUSES = ['accepted', 'duplicate', 'rejected'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

export const REJECTION_REASONS = [
  'invalid',
  'unknown_customer',
  'unknown_metric',
  'timestamp_in_future',
  'property_missing',
  'property_not_a_number',
  'period_billed',
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

/** What became of one event of a batch, in the batch's order. */
export type EventResult = {
  transactionId: string | null;
  status: EventStatus;
  reason: RejectionReason | null;
  message: string | null;
};

export type BatchResult = { accepted: number; duplicates: number; rejected: number; results: EventResult[] };

/** An event that passed every check, ready to be stored. */
type Checked = {
  index: number;
  transactionId: string;
  customerId: string;
  metricId: string;
  timestamp: Date;
  value: string | null;
  properties: Record<string, unknown>;
};

const NUMBER = /^-?\d{1,15}(\.\d{1,12})?$/;

/** The numeric value of a property, or null when it is not a number (or a decimal string). */
function numberOf(raw: unknown): string | null {
  if (typeof raw === 'number' && Number.isFinite(raw)) {
    const text = new Decimal(raw).toFixed();
    return NUMBER.test(text) ? text : null;
  }
  if (typeof raw === 'string' && NUMBER.test(raw.trim())) return new Decimal(raw.trim()).toFixed();
  return null;
}

/** `YYYY-MM-01` of the UTC month of `time`: the partition an event goes to. */
const monthOf = (time: Date) => `${time.toISOString().slice(0, 7)}-01`;

/**
 * Months this process knows a partition exists for, per database (partitions are never dropped by the
 * service).
 */
const knownMonths = new Set<string>();

/**
 * Makes sure every month in `months` has its partition. It runs outside the request's transaction, on
 * a connection of its own: a partition made for a request that then fails is still a partition.
 */
export async function ensurePartitions(em: EntityManager, months: Iterable<string>): Promise<void> {
  const database = String(em.config.get('clientUrl') ?? em.config.get('dbName'));
  for (const month of months) {
    const key = `${database} ${month}`;
    if (knownMonths.has(key)) continue;
    await em.getConnection().execute('select usage_event_partition(?::date)', [month]);
    knownMonths.add(key);
  }
}

/**
 * Takes a batch of usage events: each is answered on its own — accepted, duplicate (its transactionId
 * was taken before, for ever, in this environment) or rejected with the reason — and the accepted ones
 * are stored with one statement for their keys and one for the events.
 */
export class UsageIngestService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  async ingest(body: unknown): Promise<BatchResult> {
    const { events } = parseInput(UsageEventBatchInput, body);
    const { em, environmentId } = this.ctx;
    const results: EventResult[] = events.map(() => ({
      transactionId: null,
      status: 'accepted',
      reason: null,
      message: null,
    }));
    const reject = (index: number, reason: RejectionReason, message: string) => {
      Object.assign(results[index] as EventResult, { status: 'rejected', reason, message });
    };

    const parsed = events.map((raw, index) => {
      const candidate = raw as { transactionId?: unknown } | null;
      const result = results[index] as EventResult;
      if (candidate && typeof candidate.transactionId === 'string')
        result.transactionId = candidate.transactionId;
      const input = UsageEventInput.safeParse(raw);
      if (!input.success) {
        const issue = input.error.issues[0];
        reject(
          index,
          'invalid',
          issue ? `${issue.path.join('.') || 'event'} ${issue.message}` : 'is invalid',
        );
        return null;
      }
      result.transactionId = input.data.transactionId;
      return input.data;
    });

    const valid = parsed.flatMap((event, index) => (event ? [{ event, index }] : []));
    const customerRefs = [...new Set(valid.map(({ event }) => event.customer))];
    const codes = [...new Set(valid.map(({ event }) => event.metric))];
    const [customers, metrics] = await Promise.all([
      customerRefs.length === 0
        ? []
        : em.execute<{ id: string; handle: string | null }[]>(
            `select id, handle from customer
             where environment_id = ?
               and (id = any(array(select jsonb_array_elements_text(?::jsonb))::uuid[])
                 or handle = any(array(select jsonb_array_elements_text(?::jsonb))))`,
            [
              environmentId,
              JSON.stringify(customerRefs.filter((ref) => isUuid(ref)).map((ref) => ref.toLowerCase())),
              JSON.stringify(customerRefs),
            ],
          ),
      codes.length === 0 ? [] : em.find(BillableMetricSchema, { environmentId, code: { $in: codes } }),
    ]);
    const customerById = new Set(customers.map((customer) => customer.id));
    const customerByHandle = new Map(customers.map((customer) => [customer.handle, customer.id]));
    const metricByCode = new Map<string, BillableMetric>(metrics.map((metric) => [metric.code, metric]));
    const latest = Date.now() + FUTURE_TOLERANCE_MS;

    let checked: Checked[] = [];
    const seen = new Set<string>();
    for (const { event, index } of valid) {
      const timestamp = new Date(event.timestamp);
      const ref = event.customer;
      const customerId =
        isUuid(ref) && customerById.has(ref.toLowerCase()) ? ref.toLowerCase() : customerByHandle.get(ref);
      const metric = metricByCode.get(event.metric);
      const properties = event.properties ?? {};
      let value: string | null = null;
      if (timestamp.getTime() < EARLIEST_EVENT) {
        reject(index, 'invalid', 'timestamp must be in the year 2000 or later');
        continue;
      }
      if (timestamp.getTime() > latest) {
        reject(index, 'timestamp_in_future', 'timestamp is more than 24 hours ahead of the server clock');
        continue;
      }
      if (!customerId) {
        reject(index, 'unknown_customer', `no customer of this environment has the id or handle ${ref}`);
        continue;
      }
      if (!metric) {
        reject(
          index,
          'unknown_metric',
          `no billable metric of this environment has the code ${event.metric}`,
        );
        continue;
      }
      if (metric.aggregation !== 'count') {
        const field = metric.fieldName as string;
        const raw = properties[field];
        if (raw === undefined || raw === null) {
          reject(index, 'property_missing', `properties.${field} is needed by the metric ${metric.code}`);
          continue;
        }
        if (metric.aggregation === 'unique_count') {
          if (typeof raw !== 'string' && typeof raw !== 'number') {
            reject(index, 'invalid', `properties.${field} must be a string or a number`);
            continue;
          }
        } else {
          value = numberOf(raw);
          if (value === null) {
            reject(index, 'property_not_a_number', `properties.${field} must be a number`);
            continue;
          }
        }
      }
      if (seen.has(event.transactionId)) {
        Object.assign(results[index] as EventResult, { status: 'duplicate' });
        continue;
      }
      seen.add(event.transactionId);
      checked.push({
        index,
        transactionId: event.transactionId,
        customerId,
        metricId: metric.id,
        timestamp,
        value,
        properties,
      });
    }

    // Events for periods already billed: rejected, or accepted with an adjustment for the next invoice.
    const late = await latePeriods(em, environmentId, checked);
    const settings = late.size > 0 ? await effectiveMeteringSettings(em, environmentId) : null;
    if (settings?.lateEvents === 'reject') {
      for (const [index, periods] of late) {
        const period = periods[0] as LatePeriod;
        reject(
          index,
          'period_billed',
          `the period ${period.periodStart} to ${period.periodEnd} has already been billed`,
        );
      }
      checked = checked.filter((event) => !late.has(event.index));
    }

    if (checked.length > 0) {
      await ensurePartitions(em, new Set(checked.map((event) => monthOf(event.timestamp))));
      // Keys in one order, so two batches sharing some keys wait for each other instead of deadlocking.
      const fresh = await em.execute<{ transaction_id: string }[]>(
        `insert into usage_event_key (environment_id, transaction_id)
         select ?, key from jsonb_array_elements_text(?::jsonb) as key order by key
         on conflict do nothing returning transaction_id`,
        [environmentId, JSON.stringify(checked.map((event) => event.transactionId))],
      );
      const taken = new Set(fresh.map((row) => row.transaction_id));
      const stored = checked.filter((event) => taken.has(event.transactionId));
      for (const event of checked) {
        if (!taken.has(event.transactionId))
          Object.assign(results[event.index] as EventResult, { status: 'duplicate' });
      }
      if (stored.length > 0) {
        await em.execute(
          `insert into usage_event (environment_id, id, transaction_id, customer_id, metric_id, timestamp, value, properties)
           select ?, e.* from jsonb_to_recordset(?::jsonb) as e(id uuid, transaction_id text, customer_id uuid,
             metric_id uuid, timestamp timestamptz, value numeric, properties jsonb)`,
          [
            environmentId,
            JSON.stringify(
              stored.map((event) => ({
                id: newId(),
                transaction_id: event.transactionId,
                customer_id: event.customerId,
                metric_id: event.metricId,
                timestamp: event.timestamp.toISOString(),
                value: event.value,
                properties: event.properties,
              })),
            ),
          ],
        );
        await checkThresholds(em, environmentId, stored);
        const adjustments = stored.flatMap((event) => late.get(event.index) ?? []);
        if (adjustments.length > 0) {
          await em.execute(
            `insert into usage_adjustment (id, environment_id, subscription_item_id, period_start, period_end, created_at)
             select gen_random_uuid(), ?, a.item_id, a.period_start, a.period_end, now()
             from jsonb_to_recordset(?::jsonb) as a(item_id uuid, period_start date, period_end date)
             on conflict (subscription_item_id, period_start) where billed_at is null do nothing`,
            [
              environmentId,
              JSON.stringify(
                adjustments.map((period) => ({
                  item_id: period.itemId,
                  period_start: period.periodStart,
                  period_end: period.periodEnd,
                })),
              ),
            ],
          );
        }
      }
    }
    if (results.length === 0) throw new DomainError('INVALID_INPUT', 'the batch is empty');
    return {
      accepted: results.filter((result) => result.status === 'accepted').length,
      duplicates: results.filter((result) => result.status === 'duplicate').length,
      rejected: results.filter((result) => result.status === 'rejected').length,
      results,
    };
  }
}

type LatePeriod = { itemId: string; periodStart: string; periodEnd: string };

/**
 * The billed periods each event falls in: periods of the customer's items that bill the event's
 * metric and that a billing run has billed already. The items are locked for share, so a billing run
 * (which locks them for update) and this batch cannot interleave: an event either counts in the bill
 * or finds its period billed.
 */
async function latePeriods(
  em: EntityManager,
  environmentId: string,
  events: readonly Checked[],
): Promise<Map<number, LatePeriod[]>> {
  const late = new Map<number, LatePeriod[]>();
  if (events.length === 0) return late;
  const ids = await em.execute<{ id: string }[]>(
    `select si.id from subscription_item si join subscription s on s.id = si.subscription_id
     where si.environment_id = ? and si.method = 'event_based' and si.period_index > 0
       and si.billable_metric_id = any(array(select jsonb_array_elements_text(?::jsonb))::uuid[])
       and s.customer_id = any(array(select jsonb_array_elements_text(?::jsonb))::uuid[])
     order by si.id for share of si`,
    [
      environmentId,
      JSON.stringify([...new Set(events.map((event) => event.metricId))]),
      JSON.stringify([...new Set(events.map((event) => event.customerId))]),
    ],
  );
  if (ids.length === 0) return late;
  const items = await em.find(SubscriptionItemSchema, {
    environmentId,
    id: { $in: ids.map((row) => row.id) },
  });
  const subscriptions = await em.find(SubscriptionSchema, {
    environmentId,
    id: { $in: [...new Set(items.map((item) => item.subscriptionId))] },
  });
  const subscriptionById = new Map(subscriptions.map((subscription) => [subscription.id, subscription]));
  for (const event of events) {
    for (const item of items) {
      const subscription = subscriptionById.get(item.subscriptionId);
      if (
        !subscription ||
        item.billableMetricId !== event.metricId ||
        subscription.customerId !== event.customerId
      ) {
        continue;
      }
      const index = periodIndexAt(subscription, item, event.timestamp);
      if (index < 0 || index >= item.periodIndex || !isBillable(subscription, item, index)) continue;
      const period = itemPeriod(subscription, item, index);
      if (!period) continue;
      late.set(event.index, [
        ...(late.get(event.index) ?? []),
        { itemId: item.id, periodStart: period.start, periodEnd: period.end },
      ]);
    }
  }
  return late;
}
