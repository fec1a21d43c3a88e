import { LockMode } from '@mikro-orm/core';
import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { RequestContext } from '../../context.ts';
import { boundary, firstBoundaryOnOrAfter, type Period, termLength } from '../../dates/periods.ts';
import { dateInZone, dayOnOrAfterInZone } from '../../dates/zone.ts';
import { flushOrFail } from '../../db/flush.ts';
import { loadOrNotFound } from '../../db/loaders.ts';
import { type Connection, keysetPage, type PageArgs } from '../../db/pagination.ts';
import { DomainError, type FieldIssue, type FieldPath } from '../../errors.ts';
import { customerNow } from '../clock/clock.now.ts';
import { CustomerService } from '../customer/customer.service.ts';
import { recordEvent } from '../event/event.service.ts';
import { BillableMetricSchema } from '../metering/metering.entity.ts';
import { type Price, PriceSchema } from '../price/price.entity.ts';
import { priceLoaders } from '../price/price.reads.ts';
import { type Product, ProductSchema } from '../product/product.entity.ts';
import { productLoaders } from '../product/product.reads.ts';
import { ItemChanges, refreshTrialLine } from './subscription.changes.ts';
import {
  currentState,
  isBillable,
  itemPeriod,
  itemTerm,
  pendingPeriod,
  periodIndexAt,
  refreshBillAt,
  startOf,
} from './subscription.cycle.ts';
import {
  type ProrationBehavior,
  ProrationLineSchema,
  type Subscription,
  type SubscriptionChange,
  SubscriptionChangeSchema,
  type SubscriptionItem,
  SubscriptionItemSchema,
  SubscriptionSchema,
  type UsageRecord,
  UsageRecordSchema,
} from './subscription.entity.ts';
import type {
  SubscriptionCreateInput,
  SubscriptionFilter,
  SubscriptionItemInput,
  SubscriptionUpdateInput,
  UsageRecordInput,
} from './subscription.input.ts';
import type { ProrationDraft } from './subscription.proration.ts';
import { subscriptionLoaders } from './subscription.reads.ts';

type ResolvedItem = {
  input: SubscriptionItemInput;
  product: Product;
  price: Price;
  metricId: string | null;
};

export type ChangeOptions = { preview?: boolean };

/** A change's outcome: the subscription and the proration lines it made (or, previewed, would make). */
export type ChangeResult = { subscription: Subscription; prorationLines: ProrationDraft[] };

/** Thrown to roll a preview's transaction back. */
class PreviewRollback extends Error {}

/** A subscription as its REST document shows it: the items with a bill to come, and what they bill. */
export type SubscriptionDocument = {
  subscription: Subscription;
  items: {
    item: SubscriptionItem;
    billAt: Date;
    period: Period;
    quantity: string;
    product: Product;
    price: Price;
  }[];
};

/** Subscriptions of one environment: creating, changing and cancelling them, and recording usage. */
export class SubscriptionService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  get(id: string): Promise<Readonly<Subscription>> {
    return loadOrNotFound(this.ctx.loaders.of(subscriptionLoaders).byId, 'Subscription', id);
  }

  async read(id: string): Promise<SubscriptionDocument> {
    const subscription = await this.get(id);
    const { loaders } = this.ctx;
    const [all, changes] = await Promise.all([
      loaders.of(subscriptionLoaders).itemsBySubscriptionId.load(id),
      loaders.of(subscriptionLoaders).changesBySubscriptionId.load(id),
    ]);
    const items = await Promise.all(
      all
        .filter((item) => item.billAt)
        .map(async (item) => {
          const state = currentState(subscription, item, changes);
          const [product, price] = await Promise.all([
            loaders.of(productLoaders).byId.load(item.productId),
            loaders.of(priceLoaders).byId.load(state.priceId),
          ]);
          if (!product || !price) throw new Error(`item ${item.id} names a product or price that is missing`);
          return {
            item,
            billAt: item.billAt as Date,
            period: pendingPeriod(subscription, item) as Period,
            quantity: state.quantity,
            product,
            price,
          };
        }),
    );
    return { subscription, items };
  }

  list(filter: SubscriptionFilter, page: PageArgs): Promise<Connection<Subscription>> {
    const where: FilterQuery<Subscription> = { environmentId: this.ctx.environmentId };
    if (filter.customerId) where.customerId = filter.customerId;
    if (filter.status) where.status = filter.status;
    return keysetPage(this.ctx.em, SubscriptionSchema, where, page);
  }

  async create(input: SubscriptionCreateInput): Promise<Subscription> {
    const { environmentId } = this.ctx;
    const { customer, currency } = await new CustomerService(this.ctx).toBill(
      input.customerId,
      input.currency,
    );
    const items = await this.resolveItems(this.ctx.em, input.items, currency, 'items');
    const { start, end } = input.term;
    const renewal = end ? termLength(start, end) : null;
    const trialEnd = input.trialEnd ?? null;
    if (trialEnd) checkTrial(input, trialEnd);
    const anchor = trialEnd ?? input.billingAnchor ?? start;
    if (anchor !== start && !trialEnd) {
      if (end && anchor >= end) {
        throw DomainError.onField('INVALID_INPUT', ['billingAnchor'], `must be before the term end ${end}`);
      }
      const beyond = items.find(({ price }) => {
        const next = boundary(start, { unit: price.termUnit, count: price.termCount }, 1);
        return !next || anchor > next;
      });
      if (anchor < start || beyond) {
        throw DomainError.onField(
          'INVALID_INPUT',
          ['billingAnchor'],
          anchor < start
            ? 'must not be before the term start'
            : `must lie within the first period of every item; price "${beyond?.price.name}" bills every ${beyond?.price.termCount} ${beyond?.price.termUnit}`,
        );
      }
    }
    return this.transaction(async (tx) => {
      const subscription = tx.create(SubscriptionSchema, {
        environmentId,
        customerId: customer.id,
        handle: input.handle ?? null,
        currency,
        timezone: customer.timezone,
        startDate: anchor,
        trialEnd,
        renewalAnchor: anchor !== start ? start : null,
        termStart: start,
        termEnd: end ?? null,
        renewalUnit: renewal ? (renewal.unit as 'day' | 'month') : null,
        renewalCount: renewal?.count ?? null,
        autoRenewal: input.autoRenewal ?? false,
        status: 'active',
        cancelledAt: null,
      });
      await flushOrFail(tx, {
        unique: () =>
          DomainError.onField(
            'DUPLICATE',
            ['handle'],
            'another subscription of this environment has this handle',
          ),
      });
      const added = items.map((item) => this.addItem(tx, subscription, item, 0));
      if (anchor !== start) {
        // The days from the start to the billing anchor: a prorated first period, or a trial's zero line.
        const changes = await ItemChanges.load(tx, this.ctx.environmentId, subscription, added, 'create');
        added.forEach((item, index) => {
          if (trialEnd) changes.trial(item, items[index] as ResolvedItem, start);
          else changes.firstPeriod(item, items[index] as ResolvedItem, start);
        });
        await changes.write(startOf(subscription, start));
      }
      recordSubscriptionEvent(tx, 'subscription.created', subscription, added);
      return subscription;
    });
  }

  /**
   * Changes quantities, prices, renewal and items at `at` (default the customer's now: customerNow). Whole periods bill a change from
   * each item's next period on; with proration `create` (the default) or `invoice_now` the days from
   * `at` to the end of the period under way are prorated (see subscription.proration.ts). A preview
   * does all of it and rolls it back, answering the lines the change would make.
   */
  async update(
    id: string,
    input: SubscriptionUpdateInput,
    options: ChangeOptions = {},
  ): Promise<ChangeResult> {
    const mode = input.proration ?? 'create';
    return this.change(id, options, async (tx, subscription, items) => {
      const at = input.at ?? (await customerNow(tx, this.ctx.environmentId, subscription.customerId));
      if (subscription.status !== 'active') {
        throw new DomainError(
          'CONFLICT',
          `the subscription is ${subscription.status}; only an active subscription can change`,
        );
      }
      if (input.autoRenewal != null) {
        if (input.autoRenewal && !subscription.termEnd) {
          throw DomainError.onField(
            'INVALID_INPUT',
            ['autoRenewal'],
            'needs a term end: this subscription is open-ended',
          );
        }
        subscription.autoRenewal = input.autoRenewal;
      }
      const byId = new Map(items.map((item) => [item.id, item]));
      const unknown: FieldIssue[] = [];
      const itemAt = (itemId: string, path: FieldPath) => {
        const item = byId.get(itemId);
        if (!item) unknown.push({ path, message: 'is not an item of this subscription' });
        return item;
      };
      const changes = (input.items ?? []).flatMap((change, index) => {
        const item = itemAt(change.id, ['items', index, 'id']);
        return item ? [{ item, change, index }] : [];
      });
      const removals = (input.removeItemIds ?? []).flatMap(
        (itemId, index) => itemAt(itemId, ['removeItemIds', index]) ?? [],
      );
      if (unknown.length > 0) {
        throw new DomainError(
          'INVALID_REFERENCE',
          'The request names items this subscription does not have',
          unknown,
        );
      }
      const added = await this.resolveItems(tx, input.addItems ?? [], subscription.currency, 'addItems');
      const proration = await ItemChanges.load(tx, this.ctx.environmentId, subscription, items, mode);
      await proration.checkNewPrices(changes, subscription.currency);

      for (const { item, change } of changes) {
        proration.changeItem(item, at, {
          quantity: change.quantity ?? null,
          priceId: change.priceId ?? null,
        });
      }
      for (const item of removals) proration.endItem(item, at);
      for (const item of items) refreshBillAt(subscription, item);
      const newItems = added.map((resolved) => {
        const term = { unit: resolved.price.termUnit, count: resolved.price.termCount };
        const item = this.addItem(
          tx,
          subscription,
          resolved,
          firstBoundaryOnOrAfter(subscription.startDate, term, dayOnOrAfterInZone(at, subscription.timezone)),
        );
        proration.addItem(item, resolved, at);
        proration.trial(item, resolved, dateInZone(at, subscription.timezone));
        return item;
      });
      this.touch(subscription, [...changes.map((change) => change.item), ...removals]);
      const lines = await proration.write(at);
      recordSubscriptionEvent(tx, 'subscription.updated', subscription, [...items, ...newItems]);
      return { subscription, prorationLines: lines };
    });
  }

  /**
   * Cancels from `at` (default the customer's now: customerNow) on: no period after the one under way at `at` is billed, and the subscription no
   * longer renews. With proration `create` (default) or `invoice_now`, the unused days of the period
   * under way are credited; with `none` that period runs out.
   */
  async cancel(
    id: string,
    requestedAt?: Date,
    mode: ProrationBehavior = 'create',
    options: ChangeOptions = {},
  ): Promise<ChangeResult> {
    return this.change(id, options, async (tx, subscription, items) => {
      const at = requestedAt ?? (await customerNow(tx, this.ctx.environmentId, subscription.customerId));
      if (subscription.status !== 'active') {
        throw new DomainError('CONFLICT', `the subscription is already ${subscription.status}`);
      }
      const proration = await ItemChanges.load(tx, this.ctx.environmentId, subscription, items, mode);
      subscription.status = 'cancelled';
      subscription.cancelledAt = at;
      for (const item of items) proration.endItem(item, at);
      this.touch(subscription, items);
      const lines = await proration.write(at);
      recordSubscriptionEvent(tx, 'subscription.cancelled', subscription, items);
      return { subscription, prorationLines: lines };
    });
  }

  /** Cancels a scheduled change that no billed period has used yet, with the proration lines it made. */
  async cancelScheduledChange(changeId: string): Promise<ChangeResult> {
    const { environmentId } = this.ctx;
    const found = await this.ctx.em.findOne(SubscriptionChangeSchema, { id: changeId, environmentId });
    if (!found) throw DomainError.notFound('Scheduled change', changeId);
    return this.change(found.subscriptionId, {}, async (tx, subscription, items) => {
      const change = await tx.findOneOrFail(SubscriptionChangeSchema, { id: changeId, environmentId });
      const item = items.find((candidate) => candidate.id === change.subscriptionItemId) as SubscriptionItem;
      if (change.status === 'cancelled') throw new DomainError('CONFLICT', 'the change is already cancelled');
      const later = await tx.count(SubscriptionChangeSchema, {
        environmentId,
        subscriptionItemId: item.id,
        status: 'scheduled',
        id: { $gt: change.id },
      });
      if (later > 0) {
        throw new DomainError('CONFLICT', 'a later change of this item is scheduled; cancel that one first');
      }
      if (change.removes) {
        await this.releaseRemoval(tx, subscription, items, change);
        this.touch(subscription, [item]);
        recordSubscriptionEvent(tx, 'subscription.updated', subscription, items);
        return { subscription, prorationLines: [] };
      }
      const pending = itemPeriod(subscription, item, item.periodIndex);
      if (
        !pending ||
        change.appliesFrom < pending.start ||
        (change.appliesFrom === pending.start && !item.billAt)
      ) {
        throw new DomainError(
          'CONFLICT',
          'a billed period already used this change; it can no longer be cancelled',
        );
      }
      const lines = await tx.find(ProrationLineSchema, { environmentId, changeId: change.id });
      if (lines.some((line) => line.invoiceId)) {
        throw new DomainError(
          'CONFLICT',
          'the proration of this change is already invoiced; it can no longer be cancelled',
        );
      }
      for (const line of lines) tx.remove(line);
      change.status = 'cancelled';
      change.cancelledAt = new Date();
      const rest = await tx.find(SubscriptionChangeSchema, {
        environmentId,
        subscriptionId: subscription.id,
        status: 'scheduled',
      });
      await refreshTrialLine(tx, environmentId, subscription, item, rest);
      this.touch(subscription, [item]);
      recordSubscriptionEvent(tx, 'subscription.updated', subscription, items);
      return { subscription, prorationLines: [] };
    });
  }

  /**
   * Cancels a scheduled removal before its day has come: the item (and, when the removal came from
   * the subscription's cancellation, every item that cancellation ended, and the subscription) goes
   * on as before, and the unused-time credits the removal made are dropped. Refused once the end has
   * come or a credit is invoiced.
   */
  private async releaseRemoval(
    tx: EntityManager,
    subscription: Subscription,
    items: SubscriptionItem[],
    change: SubscriptionChange,
  ): Promise<void> {
    const { environmentId } = this.ctx;
    const now = await customerNow(tx, environmentId, subscription.customerId);
    if (subscription.status === 'ended' || startOf(subscription, change.appliesFrom) <= now) {
      throw new DomainError(
        'CONFLICT',
        `the item ended on ${change.appliesFrom}; the removal can no longer be cancelled`,
      );
    }
    const cancelledDay = subscription.cancelledAt
      ? dateInZone(subscription.cancelledAt, subscription.timezone)
      : null;
    // A cancellation of the subscription ended all its items at once: cancelling one of its removals
    // takes the whole cancellation back.
    const fromCancellation = subscription.status === 'cancelled' && cancelledDay === change.effectiveOn;
    const removals = fromCancellation
      ? await tx.find(SubscriptionChangeSchema, {
          environmentId,
          subscriptionId: subscription.id,
          removes: true,
          status: 'scheduled',
          effectiveOn: change.effectiveOn,
        })
      : [change];
    const lines = await tx.find(ProrationLineSchema, {
      environmentId,
      changeId: { $in: removals.map((removal) => removal.id) },
    });
    if (lines.some((line) => line.invoiceId)) {
      throw new DomainError(
        'CONFLICT',
        'the credit for the unused time is already invoiced; the removal can no longer be cancelled',
      );
    }
    for (const line of lines) tx.remove(line);
    const cancelled = new Date();
    for (const removal of removals) {
      removal.status = 'cancelled';
      removal.cancelledAt = cancelled;
    }
    const rest = await tx.find(SubscriptionChangeSchema, {
      environmentId,
      subscriptionId: subscription.id,
      removes: true,
      status: 'scheduled',
    });
    for (const ended of items) {
      if (!removals.some((removal) => removal.subscriptionItemId === ended.id)) continue;
      // An earlier removal of the item still waiting keeps its end.
      const still = rest
        .filter((removal) => removal.subscriptionItemId === ended.id && !removals.includes(removal))
        .map((removal) => removal.appliesFrom)
        .sort();
      ended.endsOn = still[0] ?? null;
      refreshBillAt(subscription, ended);
    }
    if (fromCancellation) {
      subscription.status = 'active';
      subscription.cancelledAt = null;
    }
  }

  /**
   * Records usage of an event-based item in the period that contains `timestamp`, which must not be
   * billed yet. The same idempotency key for the same item records once: repeating it returns the
   * first record, while reusing it for other figures is refused.
   */
  async recordUsage(input: UsageRecordInput): Promise<UsageRecord> {
    const { environmentId } = this.ctx;
    return this.ctx.em.transactional(
      async (em) => {
        const tx = em as EntityManager;
        // Billing locks the item too, so usage and the bill of its period cannot interleave.
        const item = await tx.findOne(
          SubscriptionItemSchema,
          { id: input.subscriptionItemId, environmentId },
          { lockMode: LockMode.PESSIMISTIC_WRITE },
        );
        if (!item) throw DomainError.notFound('Subscription item', input.subscriptionItemId);
        const existing = await tx.findOne(UsageRecordSchema, {
          environmentId,
          subscriptionItemId: item.id,
          idempotencyKey: input.idempotencyKey,
        });
        if (existing) {
          const same =
            Number(existing.quantity) === Number(input.quantity) &&
            existing.occurredAt.getTime() === input.timestamp.getTime();
          if (same) return existing;
          throw DomainError.onField(
            'DUPLICATE',
            ['idempotencyKey'],
            'was already used for another quantity or timestamp of this item; use a new key',
          );
        }
        if (item.method !== 'event_based') {
          throw DomainError.onField(
            'INVALID_REFERENCE',
            ['subscriptionItemId'],
            `is an item billed ${item.method === 'advance' ? 'in advance' : 'in arrears'} by its quantity; usage is recorded for event-based items`,
          );
        }
        const subscription = await tx.findOneOrFail(SubscriptionSchema, {
          id: item.subscriptionId,
          environmentId,
        });
        const index = periodIndexAt(subscription, item, input.timestamp);
        const period = index >= 0 ? itemPeriod(subscription, item, index) : null;
        if (!period || period.start < item.startsOn) {
          throw DomainError.onField(
            'CONFLICT',
            ['timestamp'],
            `is before the item's first period, which starts on ${item.startsOn}`,
          );
        }
        if (index < item.periodIndex) {
          throw DomainError.onField(
            'CONFLICT',
            ['timestamp'],
            `falls in the period ${period.start} to ${period.end}, which has already been billed`,
          );
        }
        if (!isBillable(subscription, item, index)) {
          throw DomainError.onField('CONFLICT', ['timestamp'], "falls after the item's last period");
        }
        const record = tx.create(UsageRecordSchema, {
          environmentId,
          subscriptionItemId: item.id,
          quantity: input.quantity,
          occurredAt: input.timestamp,
          idempotencyKey: input.idempotencyKey,
        });
        await tx.flush();
        return record;
      },
      { clear: true },
    );
  }

  /** Resolves products and prices, reporting every unknown one and every price without pricing in `currency`. */
  private async resolveItems(
    em: EntityManager,
    inputs: readonly SubscriptionItemInput[],
    currency: string,
    field: string,
  ): Promise<ResolvedItem[]> {
    if (inputs.length === 0) return [];
    const { environmentId } = this.ctx;
    const codes = inputs.flatMap((input) => (input.metricCode ? [input.metricCode] : []));
    const [products, prices, metrics] = await Promise.all([
      em.find(ProductSchema, { environmentId, id: { $in: inputs.map((input) => input.productId) } }),
      em.find(PriceSchema, { environmentId, id: { $in: inputs.map((input) => input.priceId) } }),
      codes.length > 0 ? em.find(BillableMetricSchema, { environmentId, code: { $in: codes } }) : [],
    ]);
    const productById = new Map(products.map((product) => [product.id, product]));
    const priceById = new Map(prices.map((price) => [price.id, price]));
    const metricByCode = new Map(metrics.map((metric) => [metric.code, metric]));
    const issues: FieldIssue[] = [];
    const resolved = inputs.flatMap((input, index) => {
      const product = productById.get(input.productId);
      const price = priceById.get(input.priceId);
      if (!product) {
        issues.push({
          path: [field, index, 'productId'],
          message: 'no product of this environment has this id',
        });
      }
      if (!price) {
        issues.push({ path: [field, index, 'priceId'], message: 'no price of this environment has this id' });
      } else if (!price.pricing[currency.toLowerCase()]) {
        issues.push({
          path: [field, index, 'priceId'],
          message: `price "${price.name}" (${price.id}) has no pricing in ${currency}`,
        });
      }
      const metric = input.metricCode ? metricByCode.get(input.metricCode) : undefined;
      if (input.metricCode && !metric) {
        issues.push({
          path: [field, index, 'metricCode'],
          message: 'no billable metric of this environment has this code',
        });
      } else if (metric && price && price.method !== 'event_based') {
        issues.push({
          path: [field, index, 'metricCode'],
          message: 'bills usage, so it needs an event-based price',
        });
      }
      return product && price ? [{ input, product, price, metricId: metric?.id ?? null }] : [];
    });
    if (issues.length > 0) {
      throw new DomainError(
        'INVALID_REFERENCE',
        'The request names products or prices that cannot be used',
        issues,
      );
    }
    return resolved;
  }

  /** Adds an item whose first period is period `firstPeriod` of its price's term. */
  private addItem(
    tx: EntityManager,
    subscription: Subscription,
    resolved: ResolvedItem,
    firstPeriod: number,
  ): SubscriptionItem {
    const { price, product, input, metricId } = resolved;
    const term = { termUnit: price.termUnit, termCount: price.termCount };
    const startsOn = boundary(subscription.startDate, itemTerm(term), firstPeriod);
    if (!startsOn) {
      throw new DomainError('CONFLICT', 'the item would start after the year 9999');
    }
    const item = tx.create(SubscriptionItemSchema, {
      environmentId: this.ctx.environmentId,
      subscriptionId: subscription.id,
      productId: product.id,
      priceId: price.id,
      billableMetricId: metricId,
      quantity: input.quantity ?? '1',
      ...term,
      purchase: price.purchase,
      method: price.method,
      startsOn,
      endsOn: null,
      periodIndex: firstPeriod,
      billAt: null,
    });
    refreshBillAt(subscription, item);
    return item;
  }

  private touch(subscription: Subscription, items: SubscriptionItem[]): void {
    const now = new Date();
    subscription.updatedAt = now;
    for (const item of items) item.updatedAt = now;
  }

  /**
   * Runs `change` on the locked subscription and its items in a transaction, then drops what the
   * loaders knew. A preview rolls the transaction back and answers what `change` answered.
   */
  private async change(
    id: string,
    options: ChangeOptions,
    change: (
      tx: EntityManager,
      subscription: Subscription,
      items: SubscriptionItem[],
    ) => Promise<ChangeResult>,
  ): Promise<ChangeResult> {
    const { environmentId } = this.ctx;
    let previewed: ChangeResult | null = null;
    try {
      const result = await this.transaction(async (tx) => {
        const subscription = await tx.findOne(
          SubscriptionSchema,
          { id, environmentId },
          { lockMode: LockMode.PESSIMISTIC_WRITE },
        );
        if (!subscription) throw DomainError.notFound('Subscription', id);
        const items = await tx.find(
          SubscriptionItemSchema,
          { subscriptionId: id, environmentId },
          { orderBy: { id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE },
        );
        const answer = await change(tx, subscription, items);
        if (options.preview) {
          await tx.flush();
          previewed = { subscription: { ...answer.subscription }, prorationLines: answer.prorationLines };
          throw new PreviewRollback();
        }
        return answer;
      });
      return result;
    } catch (error) {
      if (error instanceof PreviewRollback && previewed) return previewed;
      throw error;
    } finally {
      this.ctx.loaders.forget(subscriptionLoaders);
    }
  }

  private transaction<T>(run: (tx: EntityManager) => Promise<T>): Promise<T> {
    // A fresh identity map: what the request loaded before must not stand in for the locked rows.
    return this.ctx.em.transactional((tx) => run(tx as EntityManager), { clear: true });
  }
}

/**
 * Refuses a trial end the subscription cannot have: not after the start, not before the term end, or
 * with a billing anchor of its own (a trial anchors the periods at its end).
 */
function checkTrial(input: SubscriptionCreateInput, trialEnd: string): void {
  const { start, end } = input.term;
  if (trialEnd <= start) {
    throw DomainError.onField('INVALID_INPUT', ['trialEnd'], `must be after the term start ${start}`);
  }
  if (end && end <= trialEnd) {
    throw DomainError.onField(
      'INVALID_INPUT',
      ['trialEnd'],
      `must be before the term end ${end}: the term would end within its trial`,
    );
  }
  if (input.billingAnchor && input.billingAnchor !== trialEnd) {
    throw DomainError.onField(
      'INVALID_INPUT',
      ['billingAnchor'],
      'cannot be combined with a trial: periods are anchored at the trial end',
    );
  }
}

/** An event about a subscription, carrying it and its items as GraphQL shows them. */
function recordSubscriptionEvent(
  tx: EntityManager,
  type: 'subscription.created' | 'subscription.updated' | 'subscription.cancelled',
  subscription: Subscription,
  items: readonly SubscriptionItem[],
): void {
  recordEvent(tx, subscription.environmentId, {
    type,
    objectType: 'subscription',
    objectId: subscription.id,
    data: { ...subscription, items: items.map((item) => ({ ...item })) },
  });
}
