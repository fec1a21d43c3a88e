import type { EntityManager } from '@mikro-orm/postgresql';
import { RequestLoaders } from '../../context.ts';
import { dateOf } from '../../dates/calendar.ts';
import { boundary } from '../../dates/periods.ts';
import { dateInZone } from '../../dates/zone.ts';
import { DomainError, type FieldIssue } from '../../errors.ts';
import { Decimal } from '../../money/decimal.ts';
import { CustomerSchema } from '../customer/customer.entity.ts';
import { InvoiceBookingService } from '../invoice/invoice-booking.service.ts';
import { InvoiceDraftService } from '../invoice/invoice-drafts.service.ts';
import { type Price, PriceSchema } from '../price/price.entity.ts';
import { type Product, ProductSchema } from '../product/product.entity.ts';
import {
  endItem,
  firstChangeablePeriod,
  itemPeriod,
  itemTerm,
  stateFor,
  stateOnDay,
  termBound,
} from './subscription.cycle.ts';
import {
  type ProrationBehavior,
  ProrationLineSchema,
  type Subscription,
  type SubscriptionChange,
  SubscriptionChangeSchema,
  type SubscriptionItem,
} from './subscription.entity.ts';
import {
  type ProrationDraft,
  prorationDraft,
  prorationInvoiceItem,
  prorationSpan,
  shortDate,
  startOfSpan,
} from './subscription.proration.ts';

type Drafted = ProrationDraft & { changeId: string | null };

/**
 * One request's changes to a subscription's items: scheduled changes written in date order, and the
 * proration lines they make, stored for the next invoice or (invoice_now) invoiced at once.
 */
export class ItemChanges {
  private readonly lines: Drafted[] = [];
  /** Items that end before their first period: their trial lines not invoiced yet are dropped. */
  private readonly withoutTrial: string[] = [];
  /** Items changed during their trial: their trial lines show the quantity in force at the trial end. */
  private readonly changed = new Set<SubscriptionItem>();
  private readonly tx: EntityManager;
  private readonly environmentId: string;
  private readonly subscription: Subscription;
  private readonly mode: ProrationBehavior;
  private readonly changes: SubscriptionChange[];
  private readonly prices: Map<string, Price>;
  private readonly products: Map<string, Product>;

  private constructor(
    tx: EntityManager,
    environmentId: string,
    subscription: Subscription,
    mode: ProrationBehavior,
    changes: SubscriptionChange[],
    prices: Map<string, Price>,
    products: Map<string, Product>,
  ) {
    this.tx = tx;
    this.environmentId = environmentId;
    this.subscription = subscription;
    this.mode = mode;
    this.changes = changes;
    this.prices = prices;
    this.products = products;
  }

  static async load(
    tx: EntityManager,
    environmentId: string,
    subscription: Subscription,
    items: SubscriptionItem[],
    mode: ProrationBehavior,
  ): Promise<ItemChanges> {
    const changes = await tx.find(
      SubscriptionChangeSchema,
      { environmentId, subscriptionId: subscription.id, status: 'scheduled' },
      { orderBy: { id: 'asc' } },
    );
    const priceIds = [
      ...new Set([
        ...items.map((item) => item.priceId),
        ...changes.flatMap((change) => change.priceId ?? []),
      ]),
    ];
    const [prices, products] = await Promise.all([
      tx.find(PriceSchema, { environmentId, id: { $in: priceIds } }),
      tx.find(ProductSchema, {
        environmentId,
        id: { $in: [...new Set(items.map((item) => item.productId))] },
      }),
    ]);
    return new ItemChanges(
      tx,
      environmentId,
      subscription,
      mode,
      changes,
      new Map(prices.map((price) => [price.id, price])),
      new Map(products.map((product) => [product.id, product])),
    );
  }

  /**
   * Loads the prices quantity changes name and refuses those an item cannot take: unknown, without
   * pricing in the currency, or with another term, purchase or billing method than the item's.
   */
  async checkNewPrices(
    changes: { item: SubscriptionItem; change: { priceId?: string | null }; index: number }[],
    currency: string,
  ): Promise<void> {
    const ids = changes.flatMap(({ change }) => change.priceId ?? []);
    if (ids.length === 0) return;
    const found = await this.tx.find(PriceSchema, { environmentId: this.environmentId, id: { $in: ids } });
    for (const price of found) this.prices.set(price.id, price);
    const issues: FieldIssue[] = [];
    let code: 'INVALID_REFERENCE' | 'INVALID_INPUT' = 'INVALID_INPUT';
    for (const { item, change, index } of changes) {
      if (!change.priceId) continue;
      const path = ['items', index, 'priceId'];
      const price = found.find((candidate) => candidate.id === change.priceId);
      if (!price) {
        code = 'INVALID_REFERENCE';
        issues.push({ path, message: 'no price of this environment has this id' });
      } else if (!price.pricing[currency.toLowerCase()]) {
        code = 'INVALID_REFERENCE';
        issues.push({ path, message: `price "${price.name}" (${price.id}) has no pricing in ${currency}` });
      } else if (
        price.termUnit !== item.termUnit ||
        price.termCount !== item.termCount ||
        price.purchase !== item.purchase ||
        price.method !== item.method
      ) {
        issues.push({
          path,
          message: `price "${price.name}" bills every ${price.termCount} ${price.termUnit} ${price.purchase} ${price.method}; the item bills every ${item.termCount} ${item.termUnit} ${item.purchase} ${item.method}: remove the item and add one at the new price`,
        });
      }
    }
    if (issues.length > 0)
      throw new DomainError(code, 'The request names prices the items cannot take', issues);
  }

  /**
   * A change of the item's quantity and/or price made at `at`: scheduled for whole periods from the
   * item's first changeable period on, and prorated from the day of `at` to the end of the period under way.
   */
  changeItem(
    item: SubscriptionItem,
    at: Date,
    to: { quantity: string | null; priceId: string | null },
  ): void {
    const { subscription } = this;
    const day = dateInZone(at, subscription.timezone);
    const later = this.changes.find(
      (change) => change.subscriptionItemId === item.id && change.effectiveOn > day,
    );
    if (later) {
      throw DomainError.onField(
        'CONFLICT',
        ['at'],
        `is before a change of this item made for ${later.effectiveOn}; changes of an item are made in date order (cancel that one first)`,
      );
    }
    const span = this.mode === 'none' ? null : prorationSpan(subscription, item, at);
    const appliesFrom = boundary(
      subscription.startDate,
      itemTerm(item),
      firstChangeablePeriod(subscription, item, at),
    );
    if (!appliesFrom) throw new DomainError('CONFLICT', 'the change would apply after the year 9999');
    const before = span ? stateOnDay(item, this.changes, span.period, span.from) : null;
    const change = this.tx.create(SubscriptionChangeSchema, {
      environmentId: this.environmentId,
      subscriptionId: subscription.id,
      subscriptionItemId: item.id,
      effectiveOn: day,
      appliesFrom,
      quantity: to.quantity,
      priceId: to.priceId,
      removes: false,
      proration: this.mode,
      status: 'scheduled',
      cancelledAt: null,
    });
    this.changes.push(change);
    this.changed.add(item);
    if (!span || !before) return;
    const after = stateOnDay(item, this.changes, span.period, span.from);
    this.draft(item, 'unused', before, span, change.id);
    this.draft(item, 'remaining', after, span, change.id);
  }

  /**
   * Ends the item after the period under way at `at`, crediting that period's unused days when prorating.
   * An item that ends before its first period (removed or cancelled during its trial) bills nothing, and
   * the zero line of its trial goes too.
   */
  endItem(item: SubscriptionItem, at: Date): void {
    // An item already ending by then (removed before) had its unused time credited when it was removed.
    const end = boundary(
      this.subscription.startDate,
      itemTerm(item),
      firstChangeablePeriod(this.subscription, item, at),
    );
    const ended = item.endsOn != null && end != null && item.endsOn <= end;
    // The removal is a scheduled change of its own: visible on the item, cancellable until its day comes.
    const removal =
      ended || !end
        ? null
        : this.tx.create(SubscriptionChangeSchema, {
            environmentId: this.environmentId,
            subscriptionId: this.subscription.id,
            subscriptionItemId: item.id,
            effectiveOn: dateInZone(at, this.subscription.timezone),
            appliesFrom: end,
            quantity: null,
            priceId: null,
            removes: true,
            proration: this.mode,
            status: 'scheduled',
            cancelledAt: null,
          });
    if (removal) this.changes.push(removal);
    const span = this.mode === 'none' || ended ? null : prorationSpan(this.subscription, item, at);
    if (span) {
      const state = stateOnDay(item, this.changes, span.period, span.from);
      this.draft(item, 'unused', state, span, removal?.id ?? null);
    }
    endItem(this.subscription, item, at);
    if (item.endsOn && item.endsOn <= item.startsOn) this.withoutTrial.push(item.id);
  }

  /**
   * The zero line that names the item's trial, from `from` to the trial end, on the item's first invoice
   * (its first bill: at the trial end in advance, at the end of its first period in arrears).
   */
  trial(item: SubscriptionItem, resolved: { price: Price; product: Product }, from: string): void {
    const { subscription } = this;
    const trialEnd = subscription.trialEnd;
    if (!trialEnd || from >= trialEnd || item.method === 'event_based' || !item.billAt) return;
    const quantity = new Decimal(item.quantity).toFixed();
    if (new Decimal(quantity).isZero()) return;
    this.prices.set(resolved.price.id, resolved.price);
    this.products.set(resolved.product.id, resolved.product);
    this.lines.push({
      kind: 'trial',
      quantity,
      amount: 0,
      description: `Trial period of ${quantity} × ${resolved.product.name}, ${shortDate(from)} – ${shortDate(trialEnd)}`,
      periodStart: from,
      periodEnd: trialEnd,
      billFrom: item.billAt,
      productId: resolved.product.id,
      priceId: resolved.price.id,
      subscriptionItemId: item.id,
      changeId: null,
    });
  }

  /** An item added at `at` starts at the next boundary; when prorating, the days up to it are charged. */
  addItem(item: SubscriptionItem, resolved: { price: Price; product: Product }, at: Date): void {
    if (this.mode === 'none' || item.method === 'event_based' || item.purchase === 'one_time') return;
    this.prices.set(resolved.price.id, resolved.price);
    this.products.set(resolved.product.id, resolved.product);
    const { subscription } = this;
    const day = dateInZone(at, subscription.timezone);
    if (item.periodIndex < 1 || day >= item.startsOn) return;
    const period = itemPeriod(subscription, item, item.periodIndex - 1);
    if (!period || day < period.start) return;
    const bound = termBound(subscription);
    const to = bound && bound < item.startsOn ? bound : item.startsOn;
    if (to <= day) return;
    const span = { period, from: day, to, billFrom: startOfSpan(subscription, day) };
    this.draft(item, 'remaining', { quantity: item.quantity, priceId: item.priceId }, span, null);
  }

  /**
   * The prorated first period of an item whose subscription is anchored after its start: the days from
   * `start` to the anchor, as a share of the term ending at the anchor, billed from `start` in advance
   * and from the anchor in arrears.
   */
  firstPeriod(item: SubscriptionItem, resolved: { price: Price; product: Product }, start: string): void {
    if (item.method === 'event_based' || item.purchase === 'one_time' || start >= item.startsOn) return;
    this.prices.set(resolved.price.id, resolved.price);
    this.products.set(resolved.product.id, resolved.product);
    const { subscription } = this;
    const from = boundary(subscription.startDate, itemTerm(item), -1);
    if (!from) return;
    const span = {
      period: { start: from, end: subscription.startDate },
      from: start,
      to: subscription.startDate,
      billFrom: startOfSpan(subscription, item.method === 'advance' ? start : subscription.startDate),
    };
    this.draft(item, 'remaining', { quantity: item.quantity, priceId: item.priceId }, span, null);
  }

  private draft(
    item: SubscriptionItem,
    kind: 'unused' | 'remaining',
    state: { quantity: string; priceId: string },
    span: Parameters<typeof prorationDraft>[4],
    changeId: string | null,
  ): void {
    const price = this.prices.get(state.priceId);
    const product = this.products.get(item.productId);
    if (!price || !product) throw new Error(`item ${item.id} names a price or product that is missing`);
    const line = prorationDraft(
      this.subscription,
      item,
      kind,
      { quantity: state.quantity, price, product },
      span,
    );
    if (line) this.lines.push({ ...line, changeId });
  }

  /**
   * Stores the proration lines; with invoice_now, invoices them at once (booked unless the customer
   * collects by draft invoice), dated the UTC day of `at`. Answers the lines.
   */
  async write(at: Date): Promise<ProrationDraft[]> {
    const { tx, subscription, environmentId } = this;
    // New items first: the lines refer to them, and the unit of work does not know it.
    await tx.flush();
    if (this.withoutTrial.length > 0) {
      await tx.nativeDelete(ProrationLineSchema, {
        environmentId,
        subscriptionItemId: { $in: this.withoutTrial },
        kind: 'trial',
        invoiceId: null,
      });
    }
    for (const item of this.changed) {
      await refreshTrialLine(tx, environmentId, subscription, item, this.changes);
    }
    const rows = this.lines.map(({ changeId, ...line }) =>
      tx.create(ProrationLineSchema, {
        ...line,
        environmentId,
        customerId: subscription.customerId,
        subscriptionId: subscription.id,
        changeId,
        currency: subscription.currency,
        invoiceId: null,
      }),
    );
    if (this.mode === 'invoice_now' && rows.length > 0) {
      await tx.flush();
      const customer = await tx.findOneOrFail(CustomerSchema, { id: subscription.customerId, environmentId });
      const ctx = { em: tx, environmentId, loaders: new RequestLoaders(tx, environmentId) };
      const invoice = await new InvoiceDraftService(ctx).create(
        {
          customerId: subscription.customerId,
          currency: subscription.currency,
          date: dateOf(at),
          items: rows.map((row) =>
            prorationInvoiceItem(
              row,
              this.products.get(row.productId) as Product,
              this.prices.get(row.priceId) as Price,
            ),
          ),
        },
        rows.map((row) => ({ prorationLineId: row.id })),
      );
      if (customer.collectionMode !== 'draft_invoice')
        await new InvoiceBookingService(ctx).book(invoice.id, { creditToBalance: true });
      for (const row of rows) row.invoiceId = invoice.id;
    }
    await tx.flush();
    return rows;
  }
}

/**
 * Makes the item's trial line not invoiced yet name the quantity (and price) in force at the trial end,
 * after the item's scheduled changes (those made during the trial apply from its end). A quantity of
 * zero at the trial end bills nothing, so the line goes.
 */
export async function refreshTrialLine(
  tx: EntityManager,
  environmentId: string,
  subscription: Subscription,
  item: SubscriptionItem,
  changes: readonly SubscriptionChange[],
): Promise<void> {
  if (!subscription.trialEnd) return;
  const line = await tx.findOne(ProrationLineSchema, {
    environmentId,
    subscriptionItemId: item.id,
    kind: 'trial',
    invoiceId: null,
  });
  if (!line) return;
  const state = stateFor(item, changes, subscription.trialEnd);
  const quantity = new Decimal(state.quantity);
  if (quantity.isZero()) {
    tx.remove(line);
    return;
  }
  if (quantity.eq(line.quantity) && state.priceId === line.priceId) return;
  const product = await tx.findOneOrFail(ProductSchema, { id: item.productId, environmentId });
  line.quantity = quantity.toFixed();
  line.priceId = state.priceId;
  line.description = `Trial period of ${quantity.toFixed()} × ${product.name}, ${shortDate(line.periodStart)} – ${shortDate(line.periodEnd)}`;
}
