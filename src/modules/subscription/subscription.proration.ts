import { Temporal } from 'temporal-polyfill';
import { daysBetween } from '../../dates/calendar.ts';
import type { Period } from '../../dates/periods.ts';
import { dateInZone } from '../../dates/zone.ts';
import { DomainError } from '../../errors.ts';
import { Decimal } from '../../money/decimal.ts';
import type { InvoiceItemInput } from '../invoice/invoice.input.ts';
import type { Price } from '../price/price.entity.ts';
import { priceAmountExact, proratedAmount } from '../price/pricing.ts';
import type { Product } from '../product/product.entity.ts';
import {
  firstChangeablePeriod,
  isBillable,
  itemPeriod,
  periodIndexAt,
  startOf,
  termBound,
} from './subscription.cycle.ts';
import type { ProrationLine, Subscription, SubscriptionItem } from './subscription.entity.ts';

/*
 * Proration (DESIGN §12): by day in the subscription's time zone, `amount × days / days in period`
 * on the exact amount of the price model, rounded once per line, half away from zero. A change made
 * on local day D of a period bills that period whole as it was (or was already billed), and then
 * corrects the days from D to the period end: a credit for the unused time at the old figures and a
 * charge for the remaining time at the new ones.
 */

/** The days of a period a change made at `at` corrects: from its local day to the period end. */
export type ProrationSpan = { period: Period; from: string; to: string; billFrom: Date };

/**
 * Where a prorated change made at `at` lands for the item: the span to correct, or null when there is
 * nothing to prorate (the item has not started, is over, bills usage or once, or the change applies to
 * the whole period under way because that period is not billed and starts on the change's day).
 * A change dated before a period already billed (other than the one under way) is refused: that
 * period would have to be credited in full, which is a credit note's work.
 */
export function prorationSpan(
  subscription: Subscription,
  item: SubscriptionItem,
  at: Date,
): ProrationSpan | null {
  if (item.method === 'event_based' || item.purchase === 'one_time') return null;
  const day = dateInZone(at, subscription.timezone);
  const index = periodIndexAt(subscription, item, at);
  if (index < 0) return null;
  const period = itemPeriod(subscription, item, index);
  if (!period || period.start < item.startsOn || !isBillable(subscription, item, index)) return null;
  const lastBilled = itemPeriod(subscription, item, item.periodIndex - 1);
  if (item.periodIndex - 1 > index && lastBilled && lastBilled.start >= item.startsOn) {
    throw DomainError.onField(
      'CONFLICT',
      ['at'],
      `is before the period ${lastBilled.start} to ${lastBilled.end}, which is already billed; date the change in the last billed period or later, or make it with proration none`,
    );
  }
  if (firstChangeablePeriod(subscription, item, at) <= index) return null;
  const bound = termBound(subscription);
  const to = bound && bound < period.end ? bound : period.end;
  if (to <= day) return null;
  return { period, from: day, to, billFrom: startOf(subscription, day) };
}

/** The instant a span starting on the local day `day` begins. */
export const startOfSpan = (subscription: Subscription, day: string): Date => startOf(subscription, day);

/** `12 Mar`: the day a proration line starts, as its description names it. */
export function shortDate(date: string): string {
  return Temporal.PlainDate.from(date).toLocaleString('en-GB', {
    day: 'numeric',
    month: 'short',
    timeZone: 'UTC',
  });
}

/** What a prorated line needs to know about the figures it prorates. */
export type ProratedFigures = { quantity: string; price: Price; product: Product };

/** A proration line before it is stored (or shown by a preview). */
export type ProrationDraft = Pick<
  ProrationLine,
  | 'kind'
  | 'quantity'
  | 'amount'
  | 'description'
  | 'periodStart'
  | 'periodEnd'
  | 'billFrom'
  | 'productId'
  | 'priceId'
  | 'subscriptionItemId'
>;

/** The amount of `days` of `period` at the price's exact amount for the quantity, rounded once. */
export function proratedPeriodAmount(
  subscription: Subscription,
  price: Price,
  quantity: string,
  period: Period,
  from: string,
  to: string,
): number {
  const entry = price.pricing[subscription.currency.toLowerCase()];
  if (!entry) {
    throw new DomainError(
      'INVALID_REFERENCE',
      `price "${price.name}" (${price.id}) has no pricing in ${subscription.currency}`,
    );
  }
  try {
    const exact = priceAmountExact(price.priceModel, entry, quantity);
    return proratedAmount(exact, daysBetween(from, to), daysBetween(period.start, period.end));
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new DomainError('INVALID_INPUT', error.message);
  }
}

/** The credit for the unused time (`unused`, negative) or the charge for the remaining time (`remaining`). */
export function prorationDraft(
  subscription: Subscription,
  item: SubscriptionItem,
  kind: 'unused' | 'remaining',
  figures: ProratedFigures,
  span: Pick<ProrationSpan, 'period' | 'from' | 'to' | 'billFrom'>,
): ProrationDraft | null {
  const quantity = new Decimal(figures.quantity).toFixed();
  const amount = proratedPeriodAmount(subscription, figures.price, quantity, span.period, span.from, span.to);
  if (new Decimal(quantity).isZero()) return null;
  const what = kind === 'unused' ? 'Unused time' : 'Remaining time';
  return {
    kind,
    quantity,
    amount: kind === 'unused' ? 0 - amount : amount,
    description: `${what} on ${quantity} × ${figures.product.name} from ${shortDate(span.from)}`,
    periodStart: span.from,
    periodEnd: span.to,
    billFrom: span.billFrom,
    productId: figures.product.id,
    priceId: figures.price.id,
    subscriptionItemId: item.id,
  };
}

/**
 * The invoice line of a proration line: the item quantity at the prorated amount per unit when that is
 * exact within 6 decimals, otherwise one unit at the whole amount; the description says what it is.
 */
export function prorationInvoiceItem(
  line: Pick<ProrationLine, 'quantity' | 'amount' | 'description' | 'periodStart' | 'periodEnd'>,
  product: Product,
  price: Price,
): InvoiceItemInput {
  const units = new Decimal(line.quantity);
  const unitAmount = new Decimal(line.amount).dividedBy(units);
  const exact =
    unitAmount.decimalPlaces() <= 6 &&
    unitAmount.precision(true) <= 15 &&
    unitAmount.times(units).eq(line.amount);
  return {
    quantity: exact ? units.toFixed() : '1',
    unitAmount: exact ? unitAmount.toFixed() : String(line.amount),
    sku: product.handle ?? null,
    title: product.name,
    description: line.description,
    periodStart: line.periodStart,
    periodEnd: line.periodEnd,
    taxCode: product.taxCode ?? null,
    taxBehavior: price.taxBehavior,
  };
}
