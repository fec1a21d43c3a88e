import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { problemResponse } from '../http/problem.ts';

export type CostBudgetOptions = {
  /** Cost units a token earns per second. */
  costPerSecond: number;
  /** The most a token may have saved up; at least the largest query's cost. */
  burst: number;
};

/**
 * Operations up to this cost ride on the request rate limit alone: their responses are small, and a
 * database round trip to charge them would cost about as much as running them.
 */
export const FREE_QUERY_COST = 10_000;

/** How many throttled tokens one process remembers; beyond it the oldest are forgotten. */
const MAX_REMEMBERED = 10_000;

export type CostCharge = { admitted: true } | { admitted: false; retryAfterSeconds: number };

/**
 * A leaky bucket of query cost per API token, so one token's heavy queries cannot take the event
 * loop from every other tenant: each costly operation adds its cost, the bucket drains at
 * `costPerSecond`, and an operation that would overflow `burst` is refused until enough has drained.
 * The level is a row in PostgreSQL, so every server process shares it and the database's clock
 * decides. A refused token is also remembered in this process until it may retry, by a digest of
 * the request's credentials, so its further requests are refused before they are authenticated,
 * parsed and priced: a client ignoring Retry-After costs the server little.
 */
export class QueryCostBudget {
  private readonly options: CostBudgetOptions;
  private readonly throttledUntil = new Map<string, number>();

  constructor(options: CostBudgetOptions) {
    this.options = options;
  }

  /**
   * Whole seconds until the request's token may send GraphQL operations again, as this process
   * remembers it; undefined when it may now or the request carries no credentials.
   */
  retryAfter(request: Request, now = Date.now()): number | undefined {
    const key = credentialsKey(request);
    if (!key) return undefined;
    const until = this.throttledUntil.get(key);
    if (until === undefined) return undefined;
    if (until <= now) {
      this.throttledUntil.delete(key);
      return undefined;
    }
    return Math.max(1, Math.ceil((until - now) / 1000));
  }

  /**
   * Adds an operation's cost to the bucket of the token the request authenticated with, unless it
   * would overflow.
   */
  async charge(em: EntityManager, tokenId: string, request: Request, cost: number): Promise<CostCharge> {
    if (cost <= FREE_QUERY_COST) return { admitted: true };
    const { costPerSecond, burst } = this.options;
    // The row lock makes concurrent charges of one token add up rather than overwrite each other. The
    // row must exist to be locked: concurrent first charges of a token would otherwise each find none,
    // each start from an empty bucket, and all be admitted.
    await em.execute(
      `insert into query_cost_budget (token_id, level, updated_at) values (?, 0, clock_timestamp())
       on conflict (token_id) do nothing`,
      [tokenId],
    );
    const [row] = await em.execute<{ admitted: boolean; level: number }[]>(
      `with input as (select ?::uuid as token_id, ?::float8 as cost, ?::float8 as rate, ?::float8 as burst),
       held as (
         select greatest(0, budget.level - input.rate * extract(epoch from clock_timestamp() - budget.updated_at)) as level
         from query_cost_budget budget join input using (token_id)
         for update of budget
       ),
       decision as (select input.*, coalesce((select level from held), 0) as drained from input)
       insert into query_cost_budget as budget (token_id, level, updated_at)
       select token_id, case when drained + cost <= burst then drained + cost else drained end, clock_timestamp()
       from decision
       on conflict (token_id) do update set level = excluded.level, updated_at = excluded.updated_at
       returning budget.level, (select drained + cost <= burst from decision) as admitted`,
      [tokenId, cost, costPerSecond, burst],
    );
    if (!row || row.admitted) return { admitted: true };
    const retryAfterSeconds = Math.max(1, Math.ceil((row.level + cost - burst) / costPerSecond));
    const key = credentialsKey(request);
    if (key) this.remember(key, Date.now() + retryAfterSeconds * 1000);
    return { admitted: false, retryAfterSeconds };
  }

  private remember(key: string, until: number): void {
    this.throttledUntil.delete(key);
    if (this.throttledUntil.size >= MAX_REMEMBERED) {
      const oldest = this.throttledUntil.keys().next().value;
      if (oldest !== undefined) this.throttledUntil.delete(oldest);
    }
    this.throttledUntil.set(key, until);
  }
}

/** A digest of the request's Authorization header: the token without keeping its secret in memory. */
function credentialsKey(request: Request): string | undefined {
  const authorization = request.headers.get('authorization');
  return authorization ? createHash('sha256').update(authorization).digest('base64') : undefined;
}

/** The 429 refusing a token's GraphQL request while it waits for its budget, before its document is read. */
export function costBudgetSpentResponse(retryAfterSeconds: number, instance: string): Response {
  return problemResponse(
    {
      title: 'Query cost budget spent',
      status: 429,
      code: 'QUERY_BUDGET_EXCEEDED',
      detail: `This API token has spent its query cost budget; retry in ${retryAfterSeconds} s, or ask for smaller pages or fewer fields.`,
      instance,
    },
    { 'retry-after': String(retryAfterSeconds) },
  );
}
