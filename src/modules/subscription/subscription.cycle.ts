import { boundary, firstBoundaryOnOrAfter, type Period, periodAt, type Term } from '../../dates/periods.ts';
import { dateInZone, dayOnOrAfterInZone, startOfDayInZone } from '../../dates/zone.ts';
import type { Subscription, SubscriptionChange, SubscriptionItem } from './subscription.entity.ts';

/*
 * The billing cycle of subscription items: which periods exist, which are billed, and when. Shared
 * by the subscription service (changes) and the billing run (billing), so both read one set of rules.
 * Period dates are local dates of the subscription's time zone; a period begins at local midnight.
 */

/** The instant the local date `date` of the subscription's time zone begins. */
export const startOf = (subscription: Pick<Subscription, 'timezone'>, date: string): Date =>
  startOfDayInZone(date, subscription.timezone);

type ItemTerm = Pick<SubscriptionItem, 'termUnit' | 'termCount'>;

export const itemTerm = (item: ItemTerm): Term => ({ unit: item.termUnit, count: item.termCount });

/** Period n of the item, anchored at the subscription's start. */
export const itemPeriod = (subscription: Subscription, item: ItemTerm, n: number): Period | null =>
  periodAt(subscription.startDate, itemTerm(item), n);

/** The term end when the subscription does not renew: no period starts on or after it. */
export function termBound(subscription: Subscription): string | null {
  return !subscription.autoRenewal && subscription.termEnd ? subscription.termEnd : null;
}

/** Whether period n of the item is to be billed at all (not whether it is due yet). */
export function isBillable(subscription: Subscription, item: SubscriptionItem, n: number): boolean {
  const period = itemPeriod(subscription, item, n);
  if (!period || period.start < item.startsOn) return false;
  if (item.purchase === 'one_time' && period.start !== item.startsOn) return false;
  if (item.endsOn && period.start >= item.endsOn) return false;
  const bound = termBound(subscription);
  return !bound || period.start < bound;
}

/** When period n is billed: at its start in advance, at its end in arrears (usage too). */
export function billTimeOf(subscription: Subscription, item: SubscriptionItem, period: Period): Date {
  return startOf(subscription, item.method === 'advance' ? period.start : period.end);
}

/** Sets `billAt` from the item's pending period, or to null when that period is not billed. */
export function refreshBillAt(subscription: Subscription, item: SubscriptionItem): void {
  const period = itemPeriod(subscription, item, item.periodIndex);
  item.billAt =
    period && isBillable(subscription, item, item.periodIndex)
      ? billTimeOf(subscription, item, period)
      : null;
}

/** The period the item's next bill covers; null when nothing is left to bill. */
export function pendingPeriod(subscription: Subscription, item: SubscriptionItem): Period | null {
  return item.billAt ? itemPeriod(subscription, item, item.periodIndex) : null;
}

/** What an item bills with: its quantity and price. */
export type ItemState = { quantity: string; priceId: string };

type ChangeRow = Pick<
  SubscriptionChange,
  | 'id'
  | 'subscriptionItemId'
  | 'effectiveOn'
  | 'appliesFrom'
  | 'quantity'
  | 'priceId'
  | 'proration'
  | 'status'
>;

/** The item's scheduled (not cancelled) changes in the order they were made, which is date order. */
export function changesOf<C extends ChangeRow>(
  item: Pick<SubscriptionItem, 'id'>,
  changes: readonly C[],
): C[] {
  return changes
    .filter((change) => change.subscriptionItemId === item.id && change.status === 'scheduled')
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

const fold = (state: ItemState, change: ChangeRow): ItemState => ({
  quantity: change.quantity ?? state.quantity,
  priceId: change.priceId ?? state.priceId,
});

/** The quantity and price a whole period starting on `periodStart` bills: every change applying by then, in order. */
export function stateFor(
  item: Pick<SubscriptionItem, 'id' | 'quantity' | 'priceId'>,
  changes: readonly ChangeRow[],
  periodStart: string,
): ItemState {
  return changesOf(item, changes)
    .filter((change) => change.appliesFrom <= periodStart)
    .reduce(fold, { quantity: item.quantity, priceId: item.priceId });
}

/**
 * What is in force on `day` of `period`: the state the whole period bills, then each prorated change
 * made within the period up to that day (a change without proration waits for its boundary).
 */
export function stateOnDay(
  item: Pick<SubscriptionItem, 'id' | 'quantity' | 'priceId'>,
  changes: readonly ChangeRow[],
  period: Period,
  day: string,
): ItemState {
  return changesOf(item, changes)
    .filter(
      (change) =>
        change.appliesFrom <= period.start || (change.proration !== 'none' && change.effectiveOn <= day),
    )
    .reduce(fold, { quantity: item.quantity, priceId: item.priceId });
}

/** The item's state for its pending period, or after its last change when nothing is left to bill. */
export function currentState(
  subscription: Subscription,
  item: SubscriptionItem,
  changes: readonly ChangeRow[],
): ItemState {
  const period = pendingPeriod(subscription, item);
  return period
    ? stateFor(item, changes, period.start)
    : changesOf(item, changes).reduce(fold, { quantity: item.quantity, priceId: item.priceId });
}

/**
 * The first period of the item a change made at `at` may touch: the first that starts at or after
 * `at` and has not been billed. Periods under way at `at`, and billed ones, keep what they had.
 */
export function firstChangeablePeriod(subscription: Subscription, item: SubscriptionItem, at: Date): number {
  const next = firstBoundaryOnOrAfter(
    subscription.startDate,
    itemTerm(item),
    dayOnOrAfterInZone(at, subscription.timezone),
  );
  return Math.max(next, item.periodIndex);
}

/** Ends the item before its first changeable period (or keeps an earlier end it already has). */
export function endItem(subscription: Subscription, item: SubscriptionItem, at: Date): void {
  const from = firstChangeablePeriod(subscription, item, at);
  const end = boundary(subscription.startDate, itemTerm(item), from);
  if (end && (!item.endsOn || end < item.endsOn)) item.endsOn = end;
  refreshBillAt(subscription, item);
}

/** The item's position after its pending period was billed: the next period. */
export function advance(subscription: Subscription, item: SubscriptionItem): void {
  item.periodIndex += 1;
  refreshBillAt(subscription, item);
}

/** Whether the subscription's current term is over and renews (a cancellation stops renewals from its time on). */
export function renewalDue(subscription: Subscription, asOf: Date): boolean {
  if (subscription.status === 'ended' || !subscription.autoRenewal || !subscription.termEnd) return false;
  const termEnd = startOf(subscription, subscription.termEnd);
  return termEnd <= asOf && (!subscription.cancelledAt || subscription.cancelledAt > termEnd);
}

/** Moves the subscription into its next term, as long as the first; false when that would pass year 9999. */
export function renew(subscription: Subscription): boolean {
  const { termEnd, renewalUnit, renewalCount } = subscription;
  if (!termEnd || !renewalUnit || !renewalCount) return false;
  const term: Term = { unit: renewalUnit, count: renewalCount };
  const anchor = subscription.renewalAnchor ?? subscription.startDate;
  const current = firstBoundaryOnOrAfter(anchor, term, termEnd);
  const next = boundary(anchor, term, current + 1);
  if (!next) return false;
  subscription.termStart = termEnd;
  subscription.termEnd = next;
  return true;
}

/**
 * Whether the subscription is over at `asOf`: its end (a cancellation, or a term end without
 * renewal) has come and none of its items has a period left to bill.
 */
export function hasEnded(subscription: Subscription, items: SubscriptionItem[], asOf: Date): boolean {
  if (items.some((item) => item.billAt)) return false;
  const bound = termBound(subscription);
  const ends = [subscription.cancelledAt, bound ? startOf(subscription, bound) : null].filter(
    (end): end is Date => end != null,
  );
  return ends.length > 0 && Math.min(...ends.map((end) => end.getTime())) <= asOf.getTime();
}

/** The index of the item's period that contains `time`, or -1 when `time` is before its first boundary. */
export function periodIndexAt(subscription: Subscription, item: ItemTerm, time: Date): number {
  const day = dateInZone(time, subscription.timezone);
  if (day < subscription.startDate) return -1;
  const term = itemTerm(item);
  const index = firstBoundaryOnOrAfter(subscription.startDate, term, day);
  return boundary(subscription.startDate, term, index) === day ? index : index - 1;
}
