import type { RequestContext } from '../../context.ts';
import type { Period } from '../../dates/periods.ts';
import { DomainError } from '../../errors.ts';
import { type Price, PriceSchema } from '../price/price.entity.ts';
import { priceAmount } from '../price/pricing.ts';
import { isBillable, itemPeriod, periodIndexAt } from '../subscription/subscription.cycle.ts';
import {
  type Subscription,
  type SubscriptionItem,
  SubscriptionItemSchema,
  SubscriptionSchema,
} from '../subscription/subscription.entity.ts';
import { type BillableMetric, BillableMetricSchema } from './metering.entity.ts';
import { usageQuantity } from './usage.aggregate.ts';

/** An event-based item's usage over one of its periods, and what that would bill. */
export type ItemUsage = {
  item: SubscriptionItem;
  metric: BillableMetric | null;
  period: Period;
  quantity: string;
  /** In minor units of `currency`, by the item's price, as the billing run prices it. */
  amount: number;
  currency: string;
  /** Whether a billing run has billed this period already. */
  billed: boolean;
};

/** Reads of usage: what an item has used in a period so far, priced as its bill would be. */
export class UsageService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  /** The usage of the item's period that contains `at` (now when left out). */
  async itemUsage(subscriptionItemId: string, at: Date = new Date()): Promise<ItemUsage> {
    const { em, environmentId } = this.ctx;
    const item = await em.findOne(SubscriptionItemSchema, { id: subscriptionItemId, environmentId });
    if (!item) throw DomainError.notFound('Subscription item', subscriptionItemId);
    if (item.method !== 'event_based') {
      throw DomainError.onField(
        'INVALID_REFERENCE',
        ['subscriptionItemId'],
        'is billed by its quantity; usage is read for event-based items',
      );
    }
    const [subscription, price, metric] = await Promise.all([
      em.findOneOrFail(SubscriptionSchema, { id: item.subscriptionId, environmentId }),
      em.findOneOrFail(PriceSchema, { id: item.priceId, environmentId }),
      item.billableMetricId
        ? em.findOneOrFail(BillableMetricSchema, { id: item.billableMetricId, environmentId })
        : null,
    ]);
    const index = periodIndexAt(subscription, item, at);
    const period = index >= 0 ? itemPeriod(subscription, item, index) : null;
    if (!period || !isBillable(subscription, item, index)) {
      throw DomainError.onField('INVALID_INPUT', ['at'], 'is in no billed period of the item');
    }
    const quantity = await usageQuantity(em, environmentId, subscription, item, period, metric);
    return {
      item,
      metric,
      period,
      quantity,
      amount: amountOf(subscription, price, quantity),
      currency: subscription.currency,
      billed: index < item.periodIndex,
    };
  }
}

export function amountOf(subscription: Subscription, price: Price, quantity: string): number {
  const entry = price.pricing[subscription.currency.toLowerCase()];
  if (!entry) {
    throw new DomainError(
      'INVALID_REFERENCE',
      `price ${price.id} has no pricing in ${subscription.currency}`,
    );
  }
  return priceAmount(price.priceModel, entry, quantity);
}
