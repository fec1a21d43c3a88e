import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { RequestLoaders, type ServiceContext } from '../../context.ts';
import { dateOf } from '../../dates/calendar.ts';
import type { Period } from '../../dates/periods.ts';
import { newId } from '../../db/ids.ts';
import { newRow, takeChanges } from '../../db/lean-write.ts';
import { customerReadKey, keepRead } from '../../db/read-cache.ts';
import { batchFork, inBatchTransaction } from '../../db/tenant-transaction.ts';
import { DomainError } from '../../errors.ts';
import { Decimal } from '../../money/decimal.ts';
import { type Customer, CustomerSchema } from '../customer/customer.entity.ts';
import { customerLoaders } from '../customer/customer.reads.ts';
import { type Invoice, type InvoiceItem, InvoiceItemSchema } from '../invoice/invoice.entity.ts';
import { type InvoiceItemInput, MAX_LINES_PER_INVOICE } from '../invoice/invoice.input.ts';
import { BatchBooking } from '../invoice/invoice-batch-booking.service.ts';
import { InvoiceBookingService } from '../invoice/invoice-booking.service.ts';
import { InvoiceDraftService, type ItemLink } from '../invoice/invoice-drafts.service.ts';
import {
  type BillableMetric,
  BillableMetricSchema,
  type UsageAdjustment,
  UsageAdjustmentSchema,
} from '../metering/metering.entity.ts';
import { effectiveMeteringSettings } from '../metering/metering-settings.service.ts';
import { usageQuantity } from '../metering/usage.aggregate.ts';
import { type Price, PriceSchema } from '../price/price.entity.ts';
import { type PriceLine, priceAmount, priceLines } from '../price/pricing.ts';
import { type Product, ProductSchema } from '../product/product.entity.ts';
import {
  advance,
  hasEnded,
  itemPeriod,
  refreshBillAt,
  renew,
  renewalDue,
  stateFor,
  termBound,
} from '../subscription/subscription.cycle.ts';
import {
  type ProrationLine,
  ProrationLineSchema,
  type Subscription,
  type SubscriptionChange,
  SubscriptionChangeSchema,
  type SubscriptionItem,
  SubscriptionItemSchema,
  SubscriptionSchema,
} from '../subscription/subscription.entity.ts';
import { proratedPeriodAmount, prorationInvoiceItem } from '../subscription/subscription.proration.ts';
import { type BilledPeriod, BilledPeriodSchema } from './billing-run.entity.ts';

/** One period of one item, priced. */
type Line = {
  subscription: Subscription;
  item: SubscriptionItem;
  product: Product;
  price: Price;
  period: Period;
  quantity: string;
  amount: number;
  /** A period cut short by the end of its term: billed prorated, as one line. */
  prorated?: boolean;
  /** A period billed before whose draft was deleted: billed again as recorded, on this run's invoice. */
  released?: BilledPeriod;
  /** A late-usage adjustment of an already billed period: `amount` is the difference it bills. */
  adjustment?: UsageAdjustment;
  /** The id of the billed_period row the line is recorded in (made before the invoice, which names it). */
  billedPeriodId?: string;
};

/**
 * An invoice line whose arithmetic gives exactly `amount`: the billed quantity at amount ÷ quantity
 * when that unit amount is exact within the 6 decimals lines keep, otherwise one unit at the whole
 * amount (tiered and package prices rarely divide evenly), with the quantity named in the description.
 */
function lineFigures(
  quantity: string,
  amount: number,
): { quantity: string; unitAmount: string; whole: boolean } {
  const units = new Decimal(quantity);
  const unitAmount = new Decimal(amount).dividedBy(units);
  if (
    unitAmount.decimalPlaces() <= 6 &&
    unitAmount.precision(true) <= 15 &&
    unitAmount.times(units).eq(amount)
  ) {
    return { quantity: units.toFixed(), unitAmount: unitAmount.toFixed(), whole: false };
  }
  return { quantity: '1', unitAmount: String(amount), whole: true };
}

/** The amount of the price for `quantity`, or null where the pricing refuses it. */
function tryPriceAmount(price: Price, entry: Price['pricing'][string], quantity: string): number | null {
  try {
    return priceAmount(price.priceModel, entry, quantity);
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

/** What a preview answers for each invoice a run would create: the draft as the run would write it. */
export type PreviewInvoice = { invoice: Invoice; items: InvoiceItem[] };

export type BillOptions = {
  /** Only this subscription (and its proration lines). */
  subscriptionId?: string;
  /** Leaves the invoices drafts and the run row alone; the caller rolls everything back. */
  preview?: boolean;
  /**
   * The due work of the batch the customer is billed in, read (and locked) for all its customers at
   * once by `prefetch`; its counts on the run are added to the batch's tally, which the batch writes.
   */
  work?: BatchWork;
};

/** What a run counts, per batch. */
export type RunTally = { invoiceIds: string[]; periods: number; renewals: number; ended: number };

/**
 * The due work of a batch of customers, read in one query per table (in the order and with the locks
 * the customer-by-customer reads take), and the tally of what the batch billed.
 */
export type BatchWork = {
  subscriptions: Map<string, Subscription[]>;
  items: Map<string, SubscriptionItem[]>;
  changes: Map<string, SubscriptionChange[]>;
  prorations: Map<string, ProrationLine[]>;
  /** The customers with a billed period released by the deletion of its draft. */
  released: Set<string>;
  prices: Map<string, Price>;
  products: Map<string, Product>;
  /** The batch's customers, and the loaders their invoices are made with (customers read at once). */
  customers: Map<string, Customer>;
  loaders: RequestLoaders;
  tally: RunTally;
  /** In a scheduled run's batch: the set-based booking of its plain invoices (BatchBooking). */
  booking?: BatchBooking;
};

/**
 * Adds what a customer or a batch billed to the run's counters, and the customers a batch is done with
 * (`customersDone`). Counted in SQL, not read back and
 * rewritten: the run's list of invoices grows with every customer, and reading it into the process for
 * each one made a run's cost grow with the square of its size.
 */
export async function countOnRun(
  tx: EntityManager,
  environmentId: string,
  runId: string,
  tally: RunTally,
  customersDone = 0,
): Promise<void> {
  const { invoiceIds, periods, renewals, ended } = tally;
  if (invoiceIds.length + periods + renewals + ended + customersDone === 0) return;
  await tx.execute(
    `update billing_run set invoice_count = invoice_count + ?,
       invoice_ids = invoice_ids || string_to_array(?, ',')::uuid[],
       period_count = period_count + ?, renewal_count = renewal_count + ?, ended_count = ended_count + ?,
       customers_done = customers_done + ?
     where environment_id = ? and id = ?`,
    [invoiceIds.length, invoiceIds.join(','), periods, renewals, ended, customersDone, environmentId, runId],
  );
}

/** Appends `value` to the list of `key`. */
function group<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The invoice lines to be of a billed period or of a proration line: they go on one invoice. */
type Invoiced = { currency: string; items: InvoiceItemInput[]; key: object; link: ItemLink };

/** The billing of one customer within a run: its item periods priced, invoiced and recorded. */
export class CustomerBillingService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  /**
   * Reads and locks the due work of `customerIds` for a batch (see BatchWork): their subscriptions not
   * ended, their items, scheduled changes, waiting proration lines, the customers with released
   * periods, and the prices and products all of these name.
   */
  async prefetch(
    tx: EntityManager,
    customerIds: readonly string[],
    asOf: Date,
    { setBased = false }: { setBased?: boolean } = {},
  ): Promise<BatchWork> {
    const { environmentId } = this.ctx;
    const work: BatchWork = {
      subscriptions: new Map(),
      items: new Map(),
      changes: new Map(),
      prorations: new Map(),
      released: new Set(),
      prices: new Map(),
      products: new Map(),
      customers: new Map(),
      loaders: new RequestLoaders(tx, environmentId),
      tally: { invoiceIds: [], periods: 0, renewals: 0, ended: 0 },
    };
    if (customerIds.length === 0) return work;
    const subscriptions = await tx.find(
      SubscriptionSchema,
      { environmentId, customerId: { $in: [...customerIds] }, status: { $ne: 'ended' } },
      { orderBy: { id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    const customerOf = new Map(
      subscriptions.map((subscription) => [subscription.id, subscription.customerId]),
    );
    for (const subscription of subscriptions)
      group(work.subscriptions, subscription.customerId, subscription);
    const subscriptionIds = [...customerOf.keys()];
    const [items, changes] =
      subscriptionIds.length > 0
        ? [
            await tx.find(
              SubscriptionItemSchema,
              { environmentId, subscriptionId: { $in: subscriptionIds } },
              { orderBy: { id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE },
            ),
            await tx.find(
              SubscriptionChangeSchema,
              { environmentId, subscriptionId: { $in: subscriptionIds }, status: 'scheduled' },
              { orderBy: { id: 'asc' } },
            ),
          ]
        : [[], []];
    for (const item of items) group(work.items, customerOf.get(item.subscriptionId) as string, item);
    for (const change of changes)
      group(work.changes, customerOf.get(change.subscriptionId) as string, change);
    const prorations = await tx.find(
      ProrationLineSchema,
      { environmentId, customerId: { $in: [...customerIds] }, invoiceId: null, billFrom: { $lte: asOf } },
      { orderBy: { id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    for (const line of prorations) group(work.prorations, line.customerId, line);
    const released = await tx.execute<{ customer_id: string }[]>(
      `select distinct s.customer_id from billed_period b
       join subscription_item i on i.environment_id = b.environment_id and i.id = b.subscription_item_id
       join subscription s on s.environment_id = i.environment_id and s.id = i.subscription_id
       where b.environment_id = ? and s.customer_id in (${customerIds.map(() => '?').join(', ')})
         and b.invoice_id is null and b.quantity <> 0`,
      [environmentId, ...customerIds],
    );
    for (const row of released) work.released.add(row.customer_id);
    const priceIds = new Set([
      ...items.map((item) => item.priceId),
      ...changes.flatMap((change) => change.priceId ?? []),
      ...prorations.map((line) => line.priceId),
    ]);
    const productIds = new Set([
      ...items.map((item) => item.productId),
      ...prorations.map((line) => line.productId),
    ]);
    const [prices, products] = await Promise.all([
      priceIds.size > 0 ? tx.find(PriceSchema, { environmentId, id: { $in: [...priceIds] } }) : [],
      productIds.size > 0 ? tx.find(ProductSchema, { environmentId, id: { $in: [...productIds] } }) : [],
    ]);
    for (const price of prices) work.prices.set(price.id, price);
    for (const product of products) work.products.set(product.id, product);
    // Booking and the tax policy read the customer again, each in a transaction of its own: the batch's
    // read cache answers them.
    for (const customer of await tx.find(CustomerSchema, { environmentId, id: { $in: [...customerIds] } })) {
      work.customers.set(customer.id, customer);
      keepRead(customerReadKey(environmentId, customer.id), customer);
    }
    await work.loaders.of(customerLoaders).byId.loadMany([...customerIds]);
    if (setBased && inBatchTransaction(tx)) work.booking = await BatchBooking.of(this.ctx, tx, customerIds);
    return work;
  }

  /**
   * Bills one customer in `tx`: renews and ends its subscriptions, invoices the item periods due at
   * `asOf` and the proration lines waiting by then, records the billed periods and counts all of it on
   * the run. Answers the invoices created.
   */
  async bill(
    tx: EntityManager,
    runId: string | null,
    customerId: string,
    asOf: Date,
    options: BillOptions = {},
  ): Promise<PreviewInvoice[]> {
    const { environmentId } = this.ctx;
    const batch = options.subscriptionId ? undefined : options.work;
    const subscriptions = batch
      ? (batch.subscriptions.get(customerId) ?? [])
      : await tx.find(
          SubscriptionSchema,
          {
            environmentId,
            customerId,
            status: { $ne: 'ended' },
            ...(options.subscriptionId ? { id: options.subscriptionId } : {}),
          },
          { orderBy: { id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE },
        );
    const subscriptionIds = subscriptions.map((subscription) => subscription.id);
    const items = batch
      ? (batch.items.get(customerId) ?? [])
      : await tx.find(
          SubscriptionItemSchema,
          { environmentId, subscriptionId: { $in: subscriptionIds } },
          { orderBy: { id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE },
        );
    const changes = batch
      ? (batch.changes.get(customerId) ?? [])
      : await tx.find(
          SubscriptionChangeSchema,
          { environmentId, subscriptionId: { $in: subscriptionIds }, status: 'scheduled' },
          { orderBy: { id: 'asc' } },
        );
    const prorations = batch
      ? (batch.prorations.get(customerId) ?? [])
      : await tx.find(
          ProrationLineSchema,
          {
            environmentId,
            customerId,
            invoiceId: null,
            billFrom: { $lte: asOf },
            ...(options.subscriptionId ? { subscriptionId: options.subscriptionId } : {}),
          },
          { orderBy: { id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE },
        );
    // Periods released by the deletion of their draft: recorded as billed, on no invoice, yet not zero
    // (a period of no usage has no line to lose). They are billed again as recorded.
    const releasedIds =
      batch && !batch.released.has(customerId)
        ? []
        : await tx.execute<{ id: string }[]>(
            `select b.id from billed_period b
       join subscription_item i on i.environment_id = b.environment_id and i.id = b.subscription_item_id
       join subscription s on s.environment_id = i.environment_id and s.id = i.subscription_id
       where b.environment_id = ? and s.customer_id = ? and b.invoice_id is null and b.quantity <> 0
         ${options.subscriptionId ? 'and s.id = ?' : ''}`,
            [environmentId, customerId, ...(options.subscriptionId ? [options.subscriptionId] : [])],
          );
    const released =
      releasedIds.length > 0
        ? await tx.find(
            BilledPeriodSchema,
            { environmentId, id: { $in: releasedIds.map((row) => row.id) } },
            {
              orderBy: { subscriptionItemId: 'asc', periodStart: 'asc' },
              lockMode: LockMode.PESSIMISTIC_WRITE,
            },
          )
        : [];
    const releasedItems =
      released.length > 0
        ? await tx.find(SubscriptionItemSchema, {
            environmentId,
            id: { $in: [...new Set(released.map((row) => row.subscriptionItemId))] },
          })
        : [];
    const releasedSubscriptions =
      releasedItems.length > 0
        ? await tx.find(SubscriptionSchema, {
            environmentId,
            id: { $in: [...new Set(releasedItems.map((item) => item.subscriptionId))] },
          })
        : [];
    const priceIds = [
      ...items.map((item) => item.priceId),
      ...releasedItems.map((item) => item.priceId),
      ...changes.flatMap((change) => change.priceId ?? []),
      ...prorations.map((line) => line.priceId),
    ];
    const productIds = [
      ...items.map((item) => item.productId),
      ...releasedItems.map((item) => item.productId),
      ...prorations.map((line) => line.productId),
    ];
    const metricIds = [
      ...new Set(items.flatMap((item) => (item.billableMetricId ? [item.billableMetricId] : []))),
    ];
    // In a batch, only what the batch's reads did not bring (the items of released periods).
    const priceMissing = [...new Set(priceIds)].filter((id) => !batch?.prices.has(id));
    const productMissing = [...new Set(productIds)].filter((id) => !batch?.products.has(id));
    const [prices, products, metrics] = await Promise.all([
      priceMissing.length > 0 || !batch
        ? tx.find(PriceSchema, { environmentId, id: { $in: priceMissing } })
        : ([] as Price[]),
      productMissing.length > 0 || !batch
        ? tx.find(ProductSchema, { environmentId, id: { $in: productMissing } })
        : ([] as Product[]),
      metricIds.length > 0 ? tx.find(BillableMetricSchema, { environmentId, id: { $in: metricIds } }) : [],
    ]);
    if (batch) {
      prices.push(...priceIds.flatMap((id) => batch.prices.get(id) ?? []));
      products.push(...productIds.flatMap((id) => batch.products.get(id) ?? []));
    }
    const metricById = new Map(metrics.map((metric) => [metric.id, metric]));
    const settings = await effectiveMeteringSettings(tx, environmentId);
    const graceMs = settings.gracePeriodHours * 60 * 60 * 1000;
    // Event-based periods wait out the grace period after their end, so late events still count.
    const due = (item: SubscriptionItem) =>
      item.billAt != null &&
      item.billAt.getTime() + (item.method === 'event_based' ? graceMs : 0) <= asOf.getTime();
    const pendingAdjustments =
      metricIds.length > 0
        ? await tx.find(
            UsageAdjustmentSchema,
            { environmentId, subscriptionItemId: { $in: items.map((item) => item.id) }, billedAt: null },
            { orderBy: { periodStart: 'asc' } },
          )
        : [];
    const priceById = new Map(prices.map((price) => [price.id, price]));
    const productById = new Map(products.map((product) => [product.id, product]));
    const now = new Date();
    let renewals = 0;
    let ended = 0;
    const lines: Line[] = [];

    for (const subscription of subscriptions) {
      const own = items.filter((item) => item.subscriptionId === subscription.id);
      while (renewalDue(subscription, asOf) && renew(subscription)) {
        renewals += 1;
        subscription.updatedAt = now;
      }
      for (const item of own) {
        refreshBillAt(subscription, item);
        const billedBefore = lines.length;
        while (due(item)) {
          const period = itemPeriod(subscription, item, item.periodIndex) as Period;
          const state = stateFor(item, changes, period.start);
          const price = priceById.get(state.priceId) as Price;
          const quantity =
            item.method === 'event_based'
              ? await usageQuantity(
                  tx,
                  environmentId,
                  subscription,
                  item,
                  period,
                  item.billableMetricId ? (metricById.get(item.billableMetricId) ?? null) : null,
                )
              : new Decimal(state.quantity).toFixed();
          // A term that ends within the period (without renewal) bills the days up to its end.
          const bound = termBound(subscription);
          const cut =
            bound && bound < period.end && item.method !== 'event_based' && item.purchase !== 'one_time'
              ? bound
              : null;
          lines.push({
            subscription,
            item,
            price,
            product: productById.get(item.productId) as Product,
            period: cut ? { start: period.start, end: cut } : period,
            quantity,
            prorated: cut !== null,
            amount: cut
              ? this.prorated(subscription, price, quantity, period, cut)
              : this.price(subscription, price, quantity),
          });
          advance(subscription, item);
        }
        // Late usage of periods billed before goes on the item's next bill, as the difference it makes.
        if (lines.length > billedBefore) {
          for (const adjustment of pendingAdjustments.filter((row) => row.subscriptionItemId === item.id)) {
            lines.push(
              await this.adjustmentLine(tx, subscription, item, adjustment, {
                price: priceById.get(item.priceId) as Price,
                product: productById.get(item.productId) as Product,
                metric: item.billableMetricId ? (metricById.get(item.billableMetricId) ?? null) : null,
              }),
            );
          }
        }
      }
      if (hasEnded(subscription, own, asOf)) {
        subscription.status = 'ended';
        subscription.updatedAt = now;
        ended += 1;
      }
    }

    for (const row of released) {
      const item = releasedItems.find(
        (candidate) => candidate.id === row.subscriptionItemId,
      ) as SubscriptionItem;
      const subscription = releasedSubscriptions.find(
        (candidate) => candidate.id === item.subscriptionId,
      ) as Subscription;
      const price = priceById.get(item.priceId) as Price;
      const quantity = new Decimal(row.quantity).toFixed();
      const entry = price.pricing[subscription.currency.toLowerCase()];
      // The recorded amount is what the period bills; the price's lines show it when they give it.
      const repriced = entry ? tryPriceAmount(price, entry, quantity) : null;
      lines.push({
        subscription,
        item,
        price,
        product: productById.get(item.productId) as Product,
        period: { start: row.periodStart, end: row.periodEnd },
        quantity,
        amount: row.amount,
        prorated: repriced !== row.amount,
        released: row,
      });
    }

    const invoiced: Invoiced[] = [
      ...lines
        // A period of no usage bills nothing; an adjustment bills when it changes the amount.
        .filter((line) => (line.adjustment ? line.amount !== 0 : !new Decimal(line.quantity).isZero()))
        .map((line) => {
          if (!line.adjustment && !line.released) line.billedPeriodId = newId();
          const billedPeriodId = line.released?.id ?? line.billedPeriodId ?? null;
          return {
            currency: line.subscription.currency,
            items: invoiceItems(line),
            key: line,
            link: { billedPeriodId },
          };
        }),
      ...prorations.map((line) => ({
        currency: line.currency,
        items: [
          prorationInvoiceItem(
            line,
            productById.get(line.productId) as Product,
            priceById.get(line.priceId) as Price,
          ),
        ],
        key: line,
        link: { prorationLineId: line.id },
      })),
    ];
    const { invoiceOf, created, setBased } = await this.invoice(
      tx,
      customerId,
      asOf,
      invoiced,
      options.preview ?? false,
      batch,
    );
    for (const line of prorations) line.invoiceId = invoiceOf.get(line) ?? null;
    if (options.preview || !runId) {
      await tx.flush();
      return created;
    }
    // A customer whose invoices were all written set-based, with nothing else to record (no released
    // period, adjustment or proration line), writes its billed periods and its subscriptions' and items'
    // changes with them (writeWith) rather than through the batch's unit of work at commit.
    const alongside =
      setBased && prorations.length === 0 && lines.every((line) => !line.released && !line.adjustment)
        ? batch?.booking
        : undefined;
    const billedPeriods: BilledPeriod[] = [];
    for (const line of lines) {
      if (line.released) {
        line.released.invoiceId = invoiceOf.get(line) ?? null;
        continue;
      }
      if (line.adjustment) {
        line.adjustment.billedAt = now;
        line.adjustment.invoiceId = invoiceOf.get(line) ?? null;
        line.adjustment.quantity = line.quantity;
        line.adjustment.amount = line.amount;
        continue;
      }
      const billed = {
        ...(line.billedPeriodId ? { id: line.billedPeriodId } : {}),
        environmentId,
        subscriptionItemId: line.item.id,
        periodStart: line.period.start,
        periodEnd: line.period.end,
        quantity: line.quantity,
        amount: line.amount,
        billingRunId: runId,
        invoiceId: invoiceOf.get(line) ?? null,
      };
      if (alongside) billedPeriods.push(newRow(tx, BilledPeriodSchema, billed));
      else tx.create(BilledPeriodSchema, billed);
    }
    if (alongside) {
      const changed =
        (entity: typeof SubscriptionSchema | typeof SubscriptionItemSchema) =>
        (row: Subscription | SubscriptionItem) => ({ entity, key: row, set: takeChanges(tx, row) });
      alongside.writeWith({
        created: [{ entity: BilledPeriodSchema, rows: billedPeriods }],
        updated: [
          ...subscriptions.map(changed(SubscriptionSchema)),
          ...items.map(changed(SubscriptionItemSchema)),
        ].filter(({ set }) => Object.keys(set).length > 0),
      });
    }
    const ids = created.map(({ invoice }) => invoice.id);
    const periods = lines.filter((line) => !line.released).length;
    if (batch) {
      // The batch writes its tally once (countBatch).
      batch.tally.invoiceIds.push(...ids);
      batch.tally.periods += periods;
      batch.tally.renewals += renewals;
      batch.tally.ended += ended;
      return created;
    }
    await countOnRun(tx, environmentId, runId, { invoiceIds: ids, periods, renewals, ended });
    return created;
  }

  /**
   * The adjustment line of a billed period that late events changed: the period re-aggregated and
   * priced, less what its bill and earlier adjustments invoiced.
   */
  private async adjustmentLine(
    tx: EntityManager,
    subscription: Subscription,
    item: SubscriptionItem,
    adjustment: UsageAdjustment,
    { price, product, metric }: { price: Price; product: Product; metric: BillableMetric | null },
  ): Promise<Line> {
    const period = { start: adjustment.periodStart, end: adjustment.periodEnd };
    const quantity = await usageQuantity(tx, this.ctx.environmentId, subscription, item, period, metric);
    const [row] = await tx.execute<{ billed: string }[]>(
      `select (coalesce((select sum(amount) from billed_period
                 where environment_id = ? and subscription_item_id = ? and period_start = ?), 0)
             + coalesce((select sum(amount) from usage_adjustment
                 where environment_id = ? and subscription_item_id = ? and period_start = ? and billed_at is not null), 0))::text as billed`,
      [this.ctx.environmentId, item.id, period.start, this.ctx.environmentId, item.id, period.start],
    );
    const amount = this.price(subscription, price, quantity) - Number(row?.billed ?? 0);
    return { subscription, item, price, product, period, quantity, amount, adjustment };
  }

  /** The amount the price's model gives for `quantity` in the subscription's currency. */
  private price(subscription: Subscription, price: Price, quantity: string): number {
    const entry = price.pricing[subscription.currency.toLowerCase()];
    const name = subscription.handle ?? subscription.id;
    if (!entry) {
      throw new DomainError(
        'INVALID_REFERENCE',
        `price "${price.name}" (${price.id}) of subscription ${name} has no pricing in ${subscription.currency}`,
      );
    }
    try {
      return priceAmount(price.priceModel, entry, quantity);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      throw new DomainError('INVALID_INPUT', `subscription ${name}: ${error.message}`);
    }
  }

  /** The days of `period` up to `end` at the price, prorated by day and rounded once. */
  private prorated(
    subscription: Subscription,
    price: Price,
    quantity: string,
    period: Period,
    end: string,
  ): number {
    const name = subscription.handle ?? subscription.id;
    try {
      return proratedPeriodAmount(subscription, price, quantity, period, period.start, end);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      throw new DomainError(error.code, `subscription ${name}: ${error.message}`);
    }
  }

  /**
   * One invoice per currency for the customer's lines (a period without usage is billed as nothing),
   * another for each further MAX_LINES_PER_INVOICE lines, booked unless the customer collects by draft
   * invoice or this is a preview. Answers the invoice of each line and the invoices created.
   */
  private async invoice(
    tx: EntityManager,
    customerId: string,
    asOf: Date,
    lines: Invoiced[],
    preview: boolean,
    batch?: BatchWork,
  ): Promise<{ invoiceOf: Map<object, string>; created: PreviewInvoice[]; setBased: boolean }> {
    const invoiceOf = new Map<object, string>();
    const created: PreviewInvoice[] = [];
    // Whether every invoice went to the batch's set-based write (BatchBooking.add).
    let everySetBased = batch?.booking !== undefined && !preview;
    const byCurrency = new Map<string, Invoiced[]>();
    for (const line of lines) byCurrency.set(line.currency, [...(byCurrency.get(line.currency) ?? []), line]);
    if (byCurrency.size === 0) return { invoiceOf, created, setBased: everySetBased };
    const { environmentId } = this.ctx;
    const customer =
      batch?.customers.get(customerId) ??
      (await tx.findOneOrFail(CustomerSchema, { id: customerId, environmentId }));
    const loaders = batch?.loaders ?? new RequestLoaders(tx, environmentId);
    // In a run's batch (markBatch) each invoice is drafted and booked on a fresh identity map in the
    // batch's transaction, without savepoints: the batch's own unit of work keeps only its rows.
    const services = () => {
      const invoiceCtx = { em: inBatchTransaction(tx) ? batchFork(tx) : tx, environmentId, loaders };
      return { drafts: new InvoiceDraftService(invoiceCtx), booking: new InvoiceBookingService(invoiceCtx) };
    };
    for (const [currency, billed] of byCurrency) {
      // The lines of one period stay together: an invoice takes whole periods up to its line limit.
      const chunks: Invoiced[][] = [];
      let size = MAX_LINES_PER_INVOICE;
      for (const line of billed) {
        if (size + line.items.length > MAX_LINES_PER_INVOICE) {
          chunks.push([]);
          size = 0;
        }
        chunks.at(-1)?.push(line);
        size += line.items.length;
      }
      for (const invoiced of chunks) {
        const input = {
          customerId,
          currency,
          date: dateOf(asOf),
          items: invoiced.flatMap((line) => line.items),
        };
        const links = invoiced.flatMap((line) => line.items.map(() => line.link));
        const books = !preview && customer.collectionMode !== 'draft_invoice';
        const setBased = books && batch?.booking;
        let invoice = setBased
          ? await setBased.add(
              new InvoiceDraftService({ em: tx, environmentId, loaders }),
              customer,
              input,
              links,
            )
          : null;
        if (!invoice) {
          everySetBased = false;
          const { drafts, booking } = services();
          invoice = await drafts.create(input, links);
          if (books) {
            await batch?.booking?.beforeBooking(customerId, currency);
            await booking.book(invoice.id, { creditToBalance: true });
          }
        }
        for (const line of invoiced) invoiceOf.set(line.key, invoice.id);
        // Only a preview shows the lines; a run of a thousand lines need not read them back.
        const items = preview
          ? await tx.find(
              InvoiceItemSchema,
              { environmentId, invoiceId: invoice.id },
              { orderBy: { id: 'asc' } },
            )
          : [];
        created.push({ invoice, items });
      }
    }
    return { invoiceOf, created, setBased: everySetBased };
  }
}

/**
 * The invoice lines of a billed period: the product's name, handle and tax code, the period, the exact
 * amount, and whether the price includes tax. A whole period of a volume, graduated or package price
 * bills one line per tier reached (and per flat amount) or the packages, at the real quantities
 * (priceLines); any other period is one line.
 */
function invoiceItems(line: Line): InvoiceItemInput[] {
  const common = {
    sku: line.product.handle ?? null,
    title: line.product.name,
    periodStart: line.period.start,
    periodEnd: line.period.end,
    taxCode: line.product.taxCode ?? null,
    taxBehavior: line.price.taxBehavior,
  };
  if (line.adjustment) {
    return [
      {
        ...common,
        quantity: '1',
        unitAmount: String(line.amount),
        description: `${line.price.name}, late usage adjustment (quantity now ${line.quantity})`,
      },
    ];
  }
  const model = line.price.priceModel;
  if (model !== 'fee' && !line.prorated) {
    const entry = line.price.pricing[line.subscription.currency.toLowerCase()];
    if (entry) {
      return priceLines(model, entry, line.quantity).map((part) => ({
        ...common,
        quantity: part.quantity,
        unitAmount: part.unitAmount,
        description: partDescription(line, part),
      }));
    }
  }
  const figures = lineFigures(line.quantity, line.amount);
  return [
    {
      ...common,
      quantity: figures.quantity,
      unitAmount: figures.unitAmount,
      description: figures.whole ? `${line.price.name}, quantity ${line.quantity}` : line.price.name,
    },
  ];
}

/** `up to 10`, `over 10 up to 20`, `over 20`: the quantities a tier covers. */
function tierRange(part: PriceLine): string {
  const from = part.from ?? '0';
  if (part.upTo == null) return from === '0' ? '' : `, over ${from}`;
  return from === '0' ? `, up to ${part.upTo}` : `, over ${from} up to ${part.upTo}`;
}

/** What one line of a tiered or package period is, in words. */
function partDescription(line: Line, part: PriceLine): string {
  const name = line.price.name;
  switch (part.kind) {
    case 'tier': {
      const figures = part.collapsed ? ` (${part.collapsed.units} × ${part.collapsed.rate})` : '';
      return `${name}, tier ${part.tier}${tierRange(part)}${figures}`;
    }
    case 'flat':
      return `${name}, tier ${part.tier} flat amount`;
    case 'package': {
      const { packageSize } = line.price.pricing[line.subscription.currency.toLowerCase()] as {
        packageSize: number;
      };
      return `${name}, packages of ${packageSize} (quantity ${line.quantity})`;
    }
    case 'rounding':
      return `${name}, rounding of the tier lines to the amount rounded once`;
  }
}
