import { DeadlockException, LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { type Connection, keysetPage, type PageArgs } from '../../db/pagination.ts';
import { withReadCache } from '../../db/read-cache.ts';
import { inEnvironment, markBatch } from '../../db/tenant-transaction.ts';
import { DomainError } from '../../errors.ts';
import { billingRunsTotal } from '../../metrics.ts';
import { customerNow, onClock } from '../clock/clock.now.ts';
import { CustomerSchema } from '../customer/customer.entity.ts';
import { recordEvent } from '../event/event.service.ts';
import { SetBasedBookingRefused } from '../invoice/invoice-batch-booking.service.ts';
import { SubscriptionSchema } from '../subscription/subscription.entity.ts';
import { assertBillableMoment } from './billing.clock.ts';
import { asRunHelper, LOCK_TAKEN, withBillingRunLock, withoutRunHelpers } from './billing.lock.ts';
import { CustomerBillingService, countOnRun, type PreviewInvoice } from './billing-customer.service.ts';
import {
  ALL_HANDED_OUT,
  type BillingRun,
  BillingRunSchema,
  type BillingRunStatus,
  type BillingRunTrigger,
  NONE_HANDED_OUT,
} from './billing-run.entity.ts';

/** Thrown to roll a preview's savepoint back. */
class PreviewRollback extends Error {}

/**
 * Customers billed per transaction: a batch commits whole, so a run stopped between batches leaves
 * each customer billed completely or not at all. Its per-environment reads (settings, ledger, seller)
 * are made once per batch, and its customers' due work is read in one query per table.
 */
export const BILLING_BATCH = 100;

export type BillingRunProgress = { runId: string; customerId: string; customersDone: number };

export type BillingRunOptions = {
  triggeredBy: BillingRunTrigger;
  /**
   * Bills only the customers of this test clock (its advance); without it a run bills only the
   * customers on no clock, who live on real time.
   */
  testClockId?: string;
  /** Called for each customer once its batch is committed, in order. */
  onProgress?: (progress: BillingRunProgress) => void | Promise<void>;
  /**
   * Stops the run between two customers; it then ends as `interrupted`. The customers of the batch
   * under way billed by then are committed.
   */
  signal?: AbortSignal;
  /** Customers per transaction (BILLING_BATCH unless given). */
  batchSize?: number;
  /**
   * Batches billed at once, each in its own transaction on its own connection (1 unless given:
   * BILLING_CONCURRENCY for the server's runs). A run inside a transaction (a request's) bills one
   * batch at a time whatever this says.
   */
  concurrency?: number;
  /**
   * Called once the run has started (its row committed), outside a transaction only: asks other
   * workers to help (`help`), as the scheduled job does with BILLING_HELPERS jobs.
   */
  invite?: (runId: string) => Promise<void>;
};

/** How a process bills a run's batches, whether it leads the run or helps it. */
export type BatchOptions = Pick<BillingRunOptions, 'onProgress' | 'signal' | 'batchSize' | 'concurrency'>;

/** What billing a run's batches came to in one process: whether the signal interrupted it, and its customers done. */
type BatchesBilled = { interrupted: boolean; customersDone: number };

/** A batch's customers, and its place in the order batches were handed out. */
type HandedOut = { order: number; customers: string[] };

/** What a batch went through: the customers billed or failed, and whether the signal stopped it part way. */
type BatchResult = { order: number; seen: string[]; stopped: boolean };

/** Times a batch is billed again after PostgreSQL broke a deadlock (or a serialization failure) by failing it. */
const DEADLOCK_RETRIES = 3;

/** Whether `error` is PostgreSQL failing a transaction to break a deadlock or a serialization conflict. */
function isDeadlock(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return error instanceof DeadlockException || code === '40P01' || code === '40001';
}

/** A customer whose data the run could not bill (a DomainError): its batch is billed again without it. */
class CustomerFailed extends Error {
  readonly customerId: string;
  constructor(customerId: string, cause: DomainError) {
    super(cause.message);
    this.customerId = customerId;
  }
}

/**
 * Billing runs of one environment. A run bills every item period due at `asOf` into one invoice per
 * customer and currency, committing batch by batch (BILLING_BATCH customers): each customer's
 * invoices, the ledger rows of the periods they bill (unique per item and period), the items' next
 * bills, renewals and ends go in its batch's one transaction, so a run stopped anywhere leaves every
 * customer billed completely or not at all, and the next run carries on where it stopped. A run asked
 * for through the API is part of its request's one transaction, so there the batches' transactions are
 * savepoints and it commits whole.
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

  /**
   * The invoices the next billing run as of `asOf` would create for the customer (or only the
   * subscription), without writing anything: the run's own code bills the customer in a savepoint that
   * is then rolled back, leaving the drafts unbooked (booking would only number them). Null when the
   * customer or subscription does not exist (in this environment).
   */
  async preview(
    target: { customerId?: string | null; subscriptionId?: string | null },
    asOf: Date | null,
  ): Promise<PreviewInvoice[] | null> {
    const { environmentId } = this.ctx;
    let customerId = target.customerId ?? null;
    if (target.subscriptionId) {
      const subscription = await this.ctx.em.findOne(SubscriptionSchema, {
        id: target.subscriptionId,
        environmentId,
      });
      if (!subscription) return null;
      if (customerId && customerId !== subscription.customerId) {
        throw DomainError.onField('INVALID_INPUT', ['customerId'], 'is not the customer of the subscription');
      }
      customerId = subscription.customerId;
    }
    if (!customerId) {
      throw DomainError.onField('INVALID_INPUT', ['customerId'], 'name a customer or a subscription');
    }
    const customer = await this.ctx.em.findOne(CustomerSchema, { id: customerId, environmentId });
    if (!customer) return null;
    const at = asOf ?? (await customerNow(this.ctx.em, environmentId, customer.id));
    let previewed: PreviewInvoice[] = [];
    try {
      await this.ctx.em.transactional(
        async (tx) => {
          previewed = await new CustomerBillingService(this.ctx).bill(
            tx as EntityManager,
            null,
            customer.id,
            at,
            {
              preview: true,
              subscriptionId: target.subscriptionId ?? undefined,
            },
          );
          throw new PreviewRollback();
        },
        { clear: true },
      );
    } catch (error) {
      if (!(error instanceof PreviewRollback)) throw error;
    }
    return previewed;
  }

  /**
   * Runs a billing run as of `asOf` (assertBillableMoment, unless it is a test clock's); CONFLICT while
   * another run is under way.
   */
  async run(asOf: Date, options: BillingRunOptions): Promise<BillingRun> {
    if (!options.testClockId) await assertBillableMoment(this.ctx, asOf);
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

  /**
   * Records that a scheduled run of `scheduledAt` did not start because another run of the environment
   * held the lock: a `billing_run.skipped` event about the environment, naming the run under way when
   * one is visible (a run started by a request commits its row only with the request).
   */
  async recordSkipped(scheduledAt: Date, triggeredBy: BillingRunTrigger): Promise<void> {
    const { environmentId } = this.ctx;
    await this.transaction(async (tx) => {
      const running = await tx.findOne(
        BillingRunSchema,
        { environmentId, status: 'running' },
        { orderBy: { startedAt: 'desc' } },
      );
      recordEvent(tx, environmentId, {
        type: 'billing_run.skipped',
        objectType: 'environment',
        objectId: environmentId,
        data: {
          scheduledAt: scheduledAt.toISOString(),
          triggeredBy,
          reason: 'another billing run of this environment was under way',
          runningRunId: running?.id ?? null,
        },
      });
      await tx.flush();
    });
  }

  /**
   * Helps run `runId`, which its lead (a scheduled run in this or another process) asked help for
   * (`invite`): bills batches of its customers beside the lead's until every customer is handed out,
   * `options.concurrency` at a time. Answers the customers this helper billed (or recorded as failed),
   * or null when the run had ended or was ending (its lead waiting for its helpers), leaving it alone.
   */
  async help(runId: string, options: BatchOptions): Promise<number | null> {
    const { environmentId } = this.ctx;
    const helped = await asRunHelper(this.ctx.em, runId, async () => {
      const run = await this.transaction((tx) => tx.findOne(BillingRunSchema, { id: runId, environmentId }));
      if (run?.status !== 'running') return null;
      const { customersDone } = await this.billBatches(runId, run.asOf, run.testClockId ?? null, options);
      return customersDone;
    });
    return helped === LOCK_TAKEN ? null : helped;
  }

  private async runLocked(asOf: Date, options: BillingRunOptions): Promise<BillingRun> {
    const clockId = options.testClockId ?? null;
    const runId = await this.start(asOf, options.triggeredBy, clockId);
    // Helpers come only when asked: a run that asked none need not wait for any.
    const invited = Boolean(options.invite) && !this.ctx.em.isInTransaction();
    try {
      if (invited) await options.invite?.(runId);
      const { interrupted } = await this.billBatches(runId, asOf, clockId, options);
      const run = await this.finish(runId, interrupted ? 'interrupted' : null, invited);
      // An interrupted run did not finish: the next one carries on, and counts.
      if (run.status !== 'interrupted') {
        billingRunsTotal.labels(run.status === 'succeeded' ? 'succeeded' : 'failed').inc();
      }
      return run;
    } catch (error) {
      billingRunsTotal.labels('failed').inc();
      // Inside the caller's transaction the run row goes with everything else; otherwise it says what happened.
      if (!this.ctx.em.isInTransaction()) await this.finish(runId, 'failed', invited).catch(() => {});
      throw error;
    }
  }

  /**
   * Bills the run's customers batch by batch, `options.concurrency` batches at once (one inside a
   * transaction around the run), and answers whether the signal interrupted it and how many customers
   * its batches were done with. The customers are handed out in id order, one batch's at a time, by the
   * run's row (takeCustomers), so each batch, of this process or another helping the run, bills
   * customers no other one has. Progress is told batch by batch in the order this process's batches
   * were handed out, each batch once it and those before it have committed, so customers are told in id
   * order and `customersDone` counts up.
   */
  private async billBatches(
    runId: string,
    asOf: Date,
    clockId: string | null,
    options: BatchOptions,
  ): Promise<BatchesBilled> {
    const { signal, onProgress } = options;
    const size = Math.max(1, options.batchSize ?? BILLING_BATCH);
    const concurrency = this.ctx.em.isInTransaction() ? 1 : Math.max(1, options.concurrency ?? 1);
    let handedOut = 0;
    let stopped = false;
    let interrupted = false;
    let handing: Promise<unknown> = Promise.resolve();
    // One batch's customers at a time, in order; none once the customers are all handed out, the
    // signal has stopped the run, or a batch has failed.
    const handOut = (): Promise<HandedOut | null> => {
      const next = handing.then(async () => {
        if (signal?.aborted) interrupted = true;
        if (stopped || interrupted) return null;
        const customers = await this.takeCustomers(runId, asOf, clockId, size);
        if (customers.length === 0) {
          stopped = true;
          return null;
        }
        handedOut += 1;
        return { order: handedOut - 1, customers };
      });
      handing = next.catch(() => {});
      return next;
    };
    const results: BatchResult[] = [];
    let told = 0;
    let customersDone = 0;
    let telling: Promise<void> = Promise.resolve();
    // Tells the progress of the batches committed whose predecessors all have been told.
    const tell = (): Promise<void> => {
      telling = telling.then(async () => {
        for (let result = results[told]; result; result = results[told]) {
          told += 1;
          for (const customerId of result.seen) {
            customersDone += 1;
            await onProgress?.({ runId, customerId, customersDone });
          }
        }
      });
      return telling;
    };
    const worker = async () => {
      for (;;) {
        const result = await this.billBatch(runId, asOf, handOut, signal);
        if (!result) return;
        if (result.stopped) interrupted = true;
        results[result.order] = result;
        await tell();
      }
    };
    const workers = await Promise.allSettled(
      Array.from({ length: concurrency }, () =>
        worker().catch((error: unknown) => {
          // The other batches in flight end as they would; no more are handed out.
          stopped = true;
          throw error;
        }),
      ),
    );
    const failed = workers.find((settled) => settled.status === 'rejected');
    if (failed) throw failed.reason;
    await telling;
    return { interrupted, customersDone };
  }

  /**
   * Marks runs left `running` by a lead that died as interrupted (this run holds the lock, so no lead
   * is alive), then starts one. A dead lead's helpers may still be billing its last batches: such runs
   * are marked once those are done, so no batch of theirs bills a customer this run bills too.
   */
  private async start(
    asOf: Date,
    triggeredBy: BillingRunTrigger,
    testClockId: string | null,
  ): Promise<string> {
    const { environmentId } = this.ctx;
    // The run starts, unless a run is still `running` that is not among `abandoned`: their ids, then.
    const startAfter = (abandoned: string[]) =>
      this.transaction(async (tx) => {
        const running = await tx.find(BillingRunSchema, { environmentId, status: 'running' });
        if (running.some((run) => !abandoned.includes(run.id))) return running.map((run) => run.id);
        const now = new Date();
        for (const run of running) {
          run.status = 'interrupted';
          run.finishedAt = now;
        }
        return tx.create(BillingRunSchema, {
          environmentId,
          asOf,
          triggeredBy,
          testClockId,
          status: 'running',
          startedAt: now,
          finishedAt: null,
          invoiceCount: 0,
          periodCount: 0,
          renewalCount: 0,
          endedCount: 0,
          invoiceIds: [],
          errors: [],
          handedOutAfter: NONE_HANDED_OUT,
          customersHandedOut: 0,
          customersDone: 0,
        }).id;
      });
    // Usually none is left running, and the run starts in one transaction.
    const started = await startAfter([]);
    if (typeof started === 'string') return started;
    const run = await withoutRunHelpers(this.ctx.em, started, () => startAfter(started));
    if (typeof run !== 'string') throw new Error('a billing run started while this one held the lock');
    return run;
  }

  /**
   * Ends run `runId`: as `ended` says (interrupted, failed), or else failed when a customer could not
   * be billed, interrupted when a batch handed out never committed (its process stopped; the next run
   * bills those customers), succeeded otherwise. A run that `invited` helpers settles its status once
   * they are done, so that its counts are final; ended early, it is marked first, so that they stop at
   * their next batch.
   */
  private async finish(runId: string, ended: BillingRunStatus | null, invited: boolean): Promise<BillingRun> {
    const { environmentId } = this.ctx;
    if (ended && invited) {
      await this.transaction((tx) =>
        tx.execute(
          `update billing_run set status = ?, finished_at = now() where environment_id = ? and id = ?`,
          [ended, environmentId, runId],
        ),
      );
    }
    return withoutRunHelpers(this.ctx.em, invited ? [runId] : [], () =>
      this.transaction(async (tx) => {
        const run = await tx.findOneOrFail(BillingRunSchema, { id: runId, environmentId });
        run.status =
          ended ??
          (run.errors.length > 0
            ? 'failed'
            : run.customersDone < run.customersHandedOut
              ? 'interrupted'
              : 'succeeded');
        run.finishedAt = new Date();
        // The hand-out point is the run's own bookkeeping, not part of what it tells.
        const { handedOutAfter: _, ...finished } = run;
        recordEvent(tx, run.environmentId, {
          type: 'billing_run.finished',
          objectType: 'billing_run',
          objectId: run.id,
          data: finished,
        });
        return run;
      }),
    );
  }

  /**
   * Hands the next batch its customers: up to `limit` customers with work after the run's hand-out
   * point, which moves past them. The run's row is locked while they are chosen, so the batches of
   * every process billing the run (its helpers') take customers no other has; in a transaction of its
   * own, so that the row is not held while the batch bills. None once every customer with work has been
   * handed out, or once the run has ended (its lead interrupted, failed, or gone).
   */
  private takeCustomers(runId: string, asOf: Date, clockId: string | null, limit: number): Promise<string[]> {
    const { environmentId } = this.ctx;
    return this.transaction(async (tx) => {
      const [run] = await tx.execute<{ after: string; status: string }[]>(
        `select handed_out_after as after, status from billing_run where environment_id = ? and id = ? for update`,
        [environmentId, runId],
      );
      if (run?.status !== 'running' || run.after === ALL_HANDED_OUT) return [];
      const customers = await this.customersWithWork(tx, asOf, run.after, clockId, limit);
      await tx.execute(
        `update billing_run set handed_out_after = ?, customers_handed_out = customers_handed_out + ?
         where environment_id = ? and id = ?`,
        [customers.at(-1) ?? ALL_HANDED_OUT, customers.length, environmentId, runId],
      );
      return customers;
    });
  }

  /**
   * The next customers, in id order after `after`, with an item due, a term to renew, a subscription to
   * end, a proration line waiting or a billed period released by the deletion of its draft: the
   * customers of test clock `clockId`, or, with null, those on no clock. Walks the customers from
   * `after` and asks each one's indexes, so a batch costs the customers it passes, whatever the
   * environment's size (`offset 0` keeps each check a lookup per customer: PostgreSQL would otherwise
   * hash every due item of the environment for every batch).
   */
  private async customersWithWork(
    tx: EntityManager,
    asOf: Date,
    after: string,
    clockId: string | null,
    limit: number,
  ): Promise<string[]> {
    const clock = onClock('c.test_clock_id', clockId);
    const rows = await tx.execute<{ id: string }[]>(
      `select c.id from customer c
       where c.environment_id = ? and c.id > ? and ${clock.sql}
         and (exists (
               select 1 from subscription s
               where s.environment_id = c.environment_id and s.customer_id = c.id and s.status <> 'ended'
                 and (s.term_end <= (?::timestamptz at time zone s.timezone)::date or s.cancelled_at <= ?
                   or exists (select 1 from subscription_item i
                     where i.environment_id = s.environment_id and i.subscription_id = s.id and i.bill_at <= ?))
               offset 0)
           or exists (
               select 1 from proration_line p
               where p.environment_id = c.environment_id and p.customer_id = c.id and p.invoice_id is null
                 and p.bill_from <= ?
               offset 0)
           or exists (
               select 1 from subscription s
               join subscription_item i on i.environment_id = s.environment_id and i.subscription_id = s.id
               join billed_period b on b.environment_id = i.environment_id and b.subscription_item_id = i.id
               where s.environment_id = c.environment_id and s.customer_id = c.id
                 and b.invoice_id is null and b.quantity <> 0
               offset 0))
       order by c.id limit ?`,
      [this.ctx.environmentId, after, ...clock.params, asOf, asOf, asOf, asOf, limit],
    );
    return rows.map((row) => row.id);
  }

  /**
   * Bills the next batch of customers (`handOut`) in one transaction; null when there was none to hand
   * out. A problem a customer's data causes (a price without
   * pricing in the currency, an amount too large) is recorded on the run and the customer skipped: the
   * transaction is rolled back and the batch billed again (its customers bill the same) with the error
   * recorded instead. No savepoint per customer, so the usual batch pays nothing for the rare failure.
   * A batch that PostgreSQL failed to break a deadlock is billed again likewise. The run's counts and
   * errors are added at the batch's very end, after its numbers, where every batch takes the rows it
   * shares with the others (docs/performance.md lists them, in order). Answers the customers the batch
   * went through (billed or failed) and whether the signal stopped it part way.
   */
  private async billBatch(
    runId: string,
    asOf: Date,
    handOut: () => Promise<HandedOut | null>,
    signal: AbortSignal | undefined,
  ): Promise<BatchResult | null> {
    // Handed out once: billed again, the batch keeps its customers.
    const batch = await handOut();
    if (!batch) return null;
    const { order, customers } = batch;
    const failures = new Map<string, CustomerFailed>();
    // Plain invoices are booked set-based (BatchBooking) unless that refused (a number already used, a
    // balance made meanwhile): the batch is then billed again invoice by invoice, which tells whose.
    let setBased = true;
    let deadlocks = 0;
    for (;;) {
      try {
        return await this.transaction((tx) =>
          withReadCache(async () => {
            // Any failure rolls the batch back whole (and a customer's DomainError bills it again
            // without that customer): what it writes needs no savepoints of its own. A run inside a
            // request (billingRunCreate) keeps them, as the request's other work does.
            if (!this.ctx.em.isInTransaction()) markBatch(tx);
            const billing = new CustomerBillingService(this.ctx);
            const work = await billing.prefetch(tx, customers, asOf, { setBased });
            const seen: string[] = [];
            const errors: BillingRun['errors'] = [];
            let stopped = false;
            for (const customerId of customers) {
              if (signal?.aborted) {
                stopped = true;
                break;
              }
              const failure = failures.get(customerId);
              if (failure) {
                errors.push({ customerId, message: failure.message });
              } else {
                try {
                  await billing.bill(tx, runId, customerId, asOf, { work });
                } catch (error) {
                  if (!(error instanceof DomainError)) throw error;
                  throw new CustomerFailed(customerId, error);
                }
              }
              seen.push(customerId);
            }
            await work.booking?.flush();
            await countOnRun(tx, this.ctx.environmentId, runId, work.tally, seen.length);
            if (errors.length > 0) {
              // Locked: the run's other batches may be adding theirs.
              const run = await tx.findOneOrFail(
                BillingRunSchema,
                { id: runId, environmentId: this.ctx.environmentId },
                { lockMode: LockMode.PESSIMISTIC_WRITE },
              );
              run.errors = [...run.errors, ...errors];
            }
            return { order, seen, stopped };
          }),
        );
      } catch (error) {
        if (error instanceof SetBasedBookingRefused && setBased) {
          setBased = false;
          continue;
        }
        if (isDeadlock(error) && !this.ctx.em.isInTransaction() && deadlocks < DEADLOCK_RETRIES) {
          deadlocks += 1;
          continue;
        }
        if (!(error instanceof CustomerFailed)) throw error;
        // Again, with the failed customer's error instead of its bills. Each retry fails one customer
        // more or succeeds, so it stops.
        failures.set(error.customerId, error);
      }
    }
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
