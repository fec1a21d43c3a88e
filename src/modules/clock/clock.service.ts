import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { AccessService } from '../../auth/access.service.ts';
import type { ServiceContext } from '../../context.ts';
import { dateOf, Instant, startOfDay } from '../../dates/calendar.ts';
import { boundary, type Term, type TermUnit } from '../../dates/periods.ts';
import { type Connection, keysetPage, type PageArgs } from '../../db/pagination.ts';
import { DomainError } from '../../errors.ts';
import { enqueueJob } from '../../jobs/enqueue.ts';
import { CustomerSchema } from '../customer/customer.entity.ts';
import { recordEvent } from '../event/event.service.ts';
import { type TestClock, TestClockSchema } from './clock.entity.ts';

/** The job that bills a clock's customers up to where it is advancing to. */
export const CLOCK_ADVANCE_TASK = 'test-clock-advance';
export type ClockAdvancePayload = { environmentId: string; clockId: string };

/** Periods of the shortest recurring term of a clock's customers that one advance may cross (Stripe's rule). */
export const MAX_PERIODS_PER_ADVANCE = 2;
/** How far a clock whose customers have no recurring item may move in one advance. */
export const UNBOUNDED_ADVANCE: Term = { unit: 'year', count: 2 };

export const TestClockCreateInput = z.strictObject({
  name: z.string().trim().min(1).max(200),
  frozenTime: Instant,
});
export type TestClockCreateInput = z.infer<typeof TestClockCreateInput>;

const LENGTH_IN_DAYS: Record<TermUnit, number> = { day: 1, week: 7, month: 31, year: 366 };

/** Test clocks of one (test) environment: created, listed, advanced, deleted. */
export class TestClockService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  find(id: string): Promise<TestClock | null> {
    return this.ctx.em.findOne(TestClockSchema, { id, environmentId: this.ctx.environmentId });
  }

  list(page: PageArgs): Promise<Connection<TestClock>> {
    return keysetPage(this.ctx.em, TestClockSchema, { environmentId: this.ctx.environmentId }, page);
  }

  /** A clock at `frozenTime`; TEST_CLOCK_LIVE_ENVIRONMENT in a live environment, which has real time only. */
  async create(input: TestClockCreateInput): Promise<TestClock> {
    await this.assertTestEnvironment();
    const clock = this.ctx.em.create(TestClockSchema, {
      environmentId: this.ctx.environmentId,
      name: input.name,
      frozenTime: input.frozenTime,
      status: 'ready',
      advancingTo: null,
      updatedAt: null,
    });
    recordClockEvent(this.ctx.em, 'test_clock.created', clock);
    await this.ctx.em.flush();
    return clock;
  }

  /**
   * Starts moving the clock to `to`: the clock becomes `advancing` and a job bills its customers (only
   * them) up to `to`, then sets the frozen time and makes the clock `ready` again. Refused while an
   * advance is under way (TEST_CLOCK_ADVANCING), backwards (TEST_CLOCK_BACKWARDS) and further than
   * two periods of the shortest recurring term of its customers (TEST_CLOCK_TOO_FAR). The clock row
   * is locked, so of two advances at once one waits for the other and is then refused.
   */
  async advance(id: string, to: Date): Promise<TestClock> {
    const { environmentId } = this.ctx;
    return this.ctx.em.transactional(
      async (em) => {
        const tx = em as EntityManager;
        const clock = await tx.findOne(
          TestClockSchema,
          { id, environmentId },
          { lockMode: LockMode.PESSIMISTIC_WRITE },
        );
        if (!clock) throw DomainError.notFound('Test clock', id);
        if (clock.status === 'advancing') {
          throw new DomainError(
            'TEST_CLOCK_ADVANCING',
            `the clock is advancing to ${clock.advancingTo?.toISOString()}; advance it again once it is ready`,
          );
        }
        if (to.getTime() < clock.frozenTime.getTime()) {
          throw DomainError.onField(
            'TEST_CLOCK_BACKWARDS',
            ['to'],
            `is before the clock's frozen time ${clock.frozenTime.toISOString()}: a clock only moves forward`,
          );
        }
        const limit = await this.limit(tx, clock);
        if (to.getTime() > limit.getTime()) {
          throw DomainError.onField(
            'TEST_CLOCK_TOO_FAR',
            ['to'],
            `is later than ${limit.toISOString()}: one advance moves at most ${MAX_PERIODS_PER_ADVANCE} periods of the shortest recurring term of the clock's customers (two years without one)`,
          );
        }
        clock.status = 'advancing';
        clock.advancingTo = to;
        clock.updatedAt = new Date();
        recordClockEvent(tx, 'test_clock.advancing', clock);
        await tx.flush();
        await enqueueJob(
          tx,
          CLOCK_ADVANCE_TASK,
          { environmentId, clockId: clock.id } satisfies ClockAdvancePayload,
          {
            jobKey: `${CLOCK_ADVANCE_TASK}:${clock.id}`,
            maxAttempts: 25,
          },
        );
        return clock;
      },
      { clear: true },
    );
  }

  /** Deletes a clock no customer is attached to (customers stay on their clock for good: CONFLICT). */
  async delete(id: string): Promise<string> {
    const { environmentId } = this.ctx;
    const clock = await this.ctx.em.findOne(
      TestClockSchema,
      { id, environmentId },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!clock) throw DomainError.notFound('Test clock', id);
    if (clock.status === 'advancing') {
      throw new DomainError('TEST_CLOCK_ADVANCING', 'the clock is advancing; delete it once it is ready');
    }
    if ((await this.ctx.em.count(CustomerSchema, { environmentId, testClockId: id })) > 0) {
      throw new DomainError(
        'CONFLICT',
        'customers are attached to the clock, and stay on it; a clock without customers can be deleted',
      );
    }
    this.ctx.em.remove(clock);
    await this.ctx.em.flush();
    return id;
  }

  /** Refuses what only a test environment may have. */
  async assertTestEnvironment(): Promise<void> {
    const environment = await new AccessService(this.ctx.em).environment(this.ctx.environmentId);
    if (environment.kind !== 'test') {
      throw new DomainError(
        'TEST_CLOCK_LIVE_ENVIRONMENT',
        'test clocks belong to test environments; this environment is live and runs on real time',
      );
    }
  }

  /** The latest moment one advance may reach: two periods of the shortest recurring term of its customers. */
  private async limit(tx: EntityManager, clock: TestClock): Promise<Date> {
    const terms = await tx.execute<{ term_unit: TermUnit; term_count: number }[]>(
      `select distinct i.term_unit, i.term_count from subscription_item i
       join subscription s on s.environment_id = i.environment_id and s.id = i.subscription_id
       join customer c on c.environment_id = s.environment_id and c.id = s.customer_id
       where c.environment_id = ? and c.test_clock_id = ? and s.status <> 'ended' and i.purchase <> 'one_time'`,
      [clock.environmentId, clock.id],
    );
    const shortest =
      terms
        .map((row): Term => ({ unit: row.term_unit, count: row.term_count }))
        .sort((a, b) => LENGTH_IN_DAYS[a.unit] * a.count - LENGTH_IN_DAYS[b.unit] * b.count)[0] ??
      UNBOUNDED_ADVANCE;
    const day = dateOf(clock.frozenTime);
    const periods = shortest === UNBOUNDED_ADVANCE ? 1 : MAX_PERIODS_PER_ADVANCE;
    const last = boundary(day, shortest, periods);
    if (!last) return new Date(8.64e15);
    return new Date(startOfDay(last).getTime() + (clock.frozenTime.getTime() - startOfDay(day).getTime()));
  }
}

/** An event about a clock, carrying it as GraphQL shows it. */
export function recordClockEvent(
  em: EntityManager,
  type: 'test_clock.created' | 'test_clock.advancing' | 'test_clock.ready',
  clock: TestClock,
  extra: object = {},
): void {
  recordEvent(em, clock.environmentId, {
    type,
    objectType: 'test_clock',
    objectId: clock.id,
    data: { ...clock, ...extra },
  });
}
