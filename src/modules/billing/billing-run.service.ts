import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { type Connection, keysetPage, type PageArgs } from '../../db/pagination.ts';
import { inEnvironment } from '../../db/tenant-transaction.ts';
import { DomainError } from '../../errors.ts';
import { Loaders } from '../../loaders.ts';
import { billingRunsTotal } from '../../metrics.ts';
import { CustomerSchema } from '../customer/customer.entity.ts';
import { Exact } from '../invoice/invoice.arithmetic.ts';
import type { InvoiceItemInput } from '../invoice/invoice.input.ts';
import { InvoiceService } from '../invoice/invoice.service.ts';
import { type Price, PriceSchema } from '../price/price.entity.ts';
import { priceAmount } from '../price/pricing.ts';
import { type Product, ProductSchema } from '../product/product.entity.ts';
import {
  advance,
  hasEnded,
  itemPeriod,
  quantityFor,
  refreshBillAt,
  renew,
  renewalDue,
} from '../subscription/subscription.cycle.ts';
import {
  type Subscription,
  type SubscriptionItem,
  SubscriptionItemSchema,
  SubscriptionSchema,
} from '../subscription/subscription.entity.ts';
import { dateOf, type Period, startOfDay } from '../subscription/subscription.periods.ts';
import { assertBillableMoment } from './billing.clock.ts';
import { LOCK_TAKEN, withBillingRunLock } from './billing.lock.ts';
import {
  BilledPeriodSchema,
  type BillingRun,
  BillingRunSchema,
  type BillingRunStatus,
  type BillingRunTrigger,
} from './billing-run.entity.ts';

/** Customers looked up per query while a run looks for work. */
const CUSTOMER_BATCH = 100;
const NO_CUSTOMER = '00000000-0000-0000-0000-000000000000';

export type BillingRunProgress = { runId: string; customerId: string; customersDone: number };

export type BillingRunOptions = {
  triggeredBy: BillingRunTrigger;
  /** Called after each customer's bills are committed. */
  onProgress?: (progress: BillingRunProgress) => void | Promise<void>;
  /** Stops the run between two customers; it then ends as `interrupted`. */
  signal?: AbortSignal;
};

/** One period of one item, priced. */
type Line = {
  subscription: Subscription;
  item: SubscriptionItem;
  product: Product;
  price: Price;
  period: Period;
  quantity: string;
  amount: number;
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
  const units = new Exact(quantity);
  const unitAmount = new Exact(amount).dividedBy(units);
  if (
    unitAmount.decimalPlaces() <= 6 &&
    unitAmount.precision(true) <= 15 &&
    unitAmount.times(units).eq(amount)
  ) {
    return { quantity: units.toFixed(), unitAmount: unitAmount.toFixed(), whole: false };
  }
  return { quantity: '1', unitAmount: String(amount), whole: true };
}

/**
 * Billing runs of one environment. A run bills every item period due at `asOf` into one invoice per
 * customer and currency, committing customer by customer: each customer's invoices, the ledger rows
 * of the periods they bill (unique per item and period), the items' next bills, renewals and ends go
 * in one transaction, so a run stopped anywhere leaves every customer billed completely or not at all,
 * and the next run carries on where it stopped. A run asked for through the API is part of its
 * request's one transaction, so there the customers' transactions are savepoints and it commits whole.
 */
export class BillingRunService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  find(id: string): Promise<BillingRun | null> {
    return this.ctx.em.findOne(BillingRunSchema, { id, environmentId: this.ctx.environmentId });
  }

  list(page: PageArgs): Promise<Connection<BillingRun>> {
    return keysetPage(this.ctx.em, BillingRunSchema, { environmentId: this.ctx.environmentId }, page);
  }

  /** Runs a billing run as of `asOf` (assertBillableMoment); CONFLICT while another run is under way. */
  async run(asOf: Date, options: BillingRunOptions): Promise<BillingRun> {
    await assertBillableMoment(this.ctx, asOf);
    const result = await withBillingRunLock(this.ctx.em, this.ctx.environmentId, () =>
      this.runLocked(asOf, options),
    );
    if (result === LOCK_TAKEN) {
      throw new DomainError(
        'CONFLICT',
        'another billing run of this environment is under way; retry when it has finished',
      );
    }
    return result;
  }

  private async runLocked(asOf: Date, options: BillingRunOptions): Promise<BillingRun> {
    const runId = await this.start(asOf, options.triggeredBy);
    try {
      let after = NO_CUSTOMER;
      let customersDone = 0;
      let interrupted = false;
      while (!interrupted) {
        const customers = await this.customersWithWork(asOf, after);
        if (customers.length === 0) break;
        for (const customerId of customers) {
          if (options.signal?.aborted) {
            interrupted = true;
            break;
          }
          await this.billCustomer(runId, customerId, asOf);
          customersDone += 1;
          await options.onProgress?.({ runId, customerId, customersDone });
        }
        after = customers.at(-1) as string;
      }
      const run = await this.finish(runId, (run) => {
        if (interrupted) return 'interrupted';
        return run.errors.length > 0 ? 'failed' : 'succeeded';
      });
      // An interrupted run did not finish: the next one carries on, and counts.
      if (run.status !== 'interrupted') {
        billingRunsTotal.labels(run.status === 'succeeded' ? 'succeeded' : 'failed').inc();
      }
      return run;
    } catch (error) {
      billingRunsTotal.labels('failed').inc();
      // Inside the caller's transaction the run row goes with everything else; otherwise it says what happened.
      if (!this.ctx.em.isInTransaction()) await this.finish(runId, () => 'failed').catch(() => {});
      throw error;
    }
  }

  /** Marks runs left `running` by a process that died as interrupted (this run holds the lock, so none is alive), then starts one. */
  private async start(asOf: Date, triggeredBy: BillingRunTrigger): Promise<string> {
    const { environmentId } = this.ctx;
    return this.transaction(async (tx) => {
      const now = new Date();
      for (const abandoned of await tx.find(BillingRunSchema, { environmentId, status: 'running' })) {
        abandoned.status = 'interrupted';
        abandoned.finishedAt = now;
      }
      const run = tx.create(BillingRunSchema, {
        environmentId,
        asOf,
        triggeredBy,
        status: 'running',
        startedAt: now,
        finishedAt: null,
        invoiceCount: 0,
        periodCount: 0,
        renewalCount: 0,
        endedCount: 0,
        invoiceIds: [],
        errors: [],
      });
      return run.id;
    });
  }

  private finish(runId: string, status: (run: BillingRun) => BillingRunStatus): Promise<BillingRun> {
    return this.transaction(async (tx) => {
      const run = await tx.findOneOrFail(BillingRunSchema, {
        id: runId,
        environmentId: this.ctx.environmentId,
      });
      run.status = status(run);
      run.finishedAt = new Date();
      return run;
    });
  }

  /** The next customers, in id order after `after`, with an item due, a term to renew or a subscription to end. */
  private async customersWithWork(asOf: Date, after: string): Promise<string[]> {
    const rows = await this.transaction((tx) =>
      tx.execute<{ customer_id: string }[]>(
        `select distinct s.customer_id from subscription s
         where s.environment_id = ? and s.status <> 'ended' and s.customer_id > ?
           and (s.term_end <= ?::date or s.cancelled_at <= ? or exists (
             select 1 from subscription_item i
             where i.environment_id = s.environment_id and i.subscription_id = s.id and i.bill_at <= ?))
         order by s.customer_id limit ?`,
        [this.ctx.environmentId, after, dateOf(asOf), asOf, asOf, CUSTOMER_BATCH],
      ),
    );
    return rows.map((row) => row.customer_id);
  }

  /**
   * Bills one customer in one transaction. A problem the customer's data causes (a price without
   * pricing in the currency, an amount too large) is recorded on the run and the run goes on.
   */
  private async billCustomer(runId: string, customerId: string, asOf: Date): Promise<void> {
    try {
      await this.transaction((tx) => this.billCustomerIn(tx, runId, customerId, asOf));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      await this.transaction(async (tx) => {
        const run = await tx.findOneOrFail(BillingRunSchema, {
          id: runId,
          environmentId: this.ctx.environmentId,
        });
        run.errors = [...run.errors, { customerId, message: error.message }];
      });
    }
  }

  private async billCustomerIn(
    tx: EntityManager,
    runId: string,
    customerId: string,
    asOf: Date,
  ): Promise<void> {
    const { environmentId } = this.ctx;
    const subscriptions = await tx.find(
      SubscriptionSchema,
      { environmentId, customerId, status: { $ne: 'ended' } },
      { orderBy: { id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    const items = await tx.find(
      SubscriptionItemSchema,
      { environmentId, subscriptionId: { $in: subscriptions.map((subscription) => subscription.id) } },
      { orderBy: { id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    const [prices, products] = await Promise.all([
      tx.find(PriceSchema, { environmentId, id: { $in: [...new Set(items.map((item) => item.priceId))] } }),
      tx.find(ProductSchema, {
        environmentId,
        id: { $in: [...new Set(items.map((item) => item.productId))] },
      }),
    ]);
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
        while (item.billAt && item.billAt <= asOf) {
          const period = itemPeriod(subscription, item, item.periodIndex) as Period;
          const price = priceById.get(item.priceId) as Price;
          const quantity =
            item.method === 'event_based'
              ? await this.usageIn(tx, item, period)
              : new Exact(quantityFor(item, period)).toFixed();
          lines.push({
            subscription,
            item,
            price,
            product: productById.get(item.productId) as Product,
            period,
            quantity,
            amount: this.price(subscription, price, quantity),
          });
          advance(subscription, item, period);
        }
      }
      if (hasEnded(subscription, own, asOf)) {
        subscription.status = 'ended';
        subscription.updatedAt = now;
        ended += 1;
      }
    }

    const invoiceIds = await this.invoice(tx, customerId, asOf, lines);
    for (const line of lines) {
      tx.create(BilledPeriodSchema, {
        environmentId,
        subscriptionItemId: line.item.id,
        periodStart: line.period.start,
        periodEnd: line.period.end,
        quantity: line.quantity,
        amount: line.amount,
        billingRunId: runId,
        invoiceId: invoiceIds.get(line) ?? null,
      });
    }
    const run = await tx.findOneOrFail(BillingRunSchema, { id: runId, environmentId });
    const created = [...new Set(invoiceIds.values())];
    run.invoiceCount += created.length;
    run.invoiceIds = [...run.invoiceIds, ...created];
    run.periodCount += lines.length;
    run.renewalCount += renewals;
    run.endedCount += ended;
  }

  /** Usage of an event-based item within the period, summed exactly by PostgreSQL. */
  private async usageIn(tx: EntityManager, item: SubscriptionItem, period: Period): Promise<string> {
    const [row] = await tx.execute<{ total: string }[]>(
      `select coalesce(sum(quantity), 0)::text as total from usage_record
       where environment_id = ? and subscription_item_id = ? and occurred_at >= ? and occurred_at < ?`,
      [this.ctx.environmentId, item.id, startOfDay(period.start), startOfDay(period.end)],
    );
    return new Exact(row?.total ?? 0).toFixed();
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

  /**
   * One invoice per currency for the customer's lines with a quantity (a period without usage is
   * billed as nothing), booked unless the customer collects by draft invoice. Answers the invoice of
   * each invoiced line.
   */
  private async invoice(
    tx: EntityManager,
    customerId: string,
    asOf: Date,
    lines: Line[],
  ): Promise<Map<Line, string>> {
    const invoiceOf = new Map<Line, string>();
    const byCurrency = new Map<string, Line[]>();
    for (const line of lines) {
      if (new Exact(line.quantity).isZero()) continue;
      const currency = line.subscription.currency;
      byCurrency.set(currency, [...(byCurrency.get(currency) ?? []), line]);
    }
    if (byCurrency.size === 0) return invoiceOf;
    const { environmentId } = this.ctx;
    const customer = await tx.findOneOrFail(CustomerSchema, { id: customerId, environmentId });
    const invoices = new InvoiceService({ em: tx, environmentId, loaders: new Loaders(tx, environmentId) });
    for (const [currency, invoiced] of byCurrency) {
      const invoice = await invoices.create({
        customerId,
        currency,
        date: dateOf(asOf),
        items: invoiced.map(invoiceItem),
      });
      if (customer.collectionMode !== 'draft_invoice') await invoices.book(invoice.id);
      for (const line of invoiced) invoiceOf.set(line, invoice.id);
    }
    return invoiceOf;
  }

  /**
   * One step of the run in a transaction of its own. Inside a request (billingRunCreate), whose work
   * is one transaction already, that is a savepoint. The server's own runs have no transaction around
   * them and commit customer by customer: each step opens the environment's transaction, without which
   * row-level security shows the application role no tenant row.
   */
  private transaction<T>(run: (tx: EntityManager) => Promise<T>): Promise<T> {
    if (!this.ctx.em.isInTransaction()) return inEnvironment(this.ctx.em, this.ctx.environmentId, run);
    return this.ctx.em.transactional((tx) => run(tx as EntityManager), { clear: true });
  }
}

/** The invoice line of a billed period: the product's name, handle and tax code, the period, the exact amount. */
function invoiceItem(line: Line): InvoiceItemInput {
  const figures = lineFigures(line.quantity, line.amount);
  return {
    quantity: figures.quantity,
    unitAmount: figures.unitAmount,
    sku: line.product.handle ?? null,
    title: line.product.name,
    description: figures.whole ? `${line.price.name}, quantity ${line.quantity}` : line.price.name,
    periodStart: line.period.start,
    periodEnd: line.period.end,
    taxCode: line.product.taxCode ?? null,
  };
}
