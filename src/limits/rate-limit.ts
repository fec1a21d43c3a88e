import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { problemResponse } from '../http/problem.ts';

export type RateLimitOptions = { maxRequests: number; windowSeconds: number };

/** How long a process may hold requests it reserved and has not used before it gives them back. */
export const RECONCILE_MS = 1_000;

/** The largest block one process reserves: a sixteenth of the window's budget (at least one request). */
export const largestBlock = (maxRequests: number): number => Math.max(1, Math.floor(maxRequests / 16));

type Block = {
  /** The window the block belongs to, as PostgreSQL wrote it (to give unused requests back to it only). */
  windowStart: string;
  size: number;
  left: number;
  /** When the window ends, on this process's clock. */
  endsAt: number;
  /** When the unused rest goes back to PostgreSQL. */
  reconcileAt: number;
};

/**
 * A fixed-window request limit per API token, shared by every server process through a row in
 * PostgreSQL: the window opens with the token's first request and lasts `windowSeconds`, and the
 * database's clock decides, so processes on skewed clocks still agree.
 *
 * A process does not write that row for every request: it reserves a block of the token's budget in one
 * statement (`rate_limit_reserve`) and admits the block's requests from memory. A block starts at one
 * request and doubles each time one is used up within RECONCILE_MS, up to `largestBlock` (a sixteenth of
 * the budget); what a process has not used after RECONCILE_MS goes back with its next reservation or the
 * once-a-second sweep. Every admitted request was reserved in PostgreSQL first, so all processes together
 * never admit more than `maxRequests` a window. The tolerance is on the other side: while other processes
 * hold unused reservations (at most one block each, for at most about a second), a token can be refused
 * up to that many requests early. A small budget (under 32) gets blocks of one: every request is counted
 * in PostgreSQL as it comes, exactly.
 */
export class RateLimiter {
  private readonly options: RateLimitOptions;
  private readonly blocks = new Map<string, Block>();
  private readonly reserving = new Map<string, Promise<unknown>>();
  private readonly orm: MikroORM | undefined;
  private sweeper: NodeJS.Timeout | undefined;

  /** `orm` gives back what idle tokens' blocks did not use; without it they lapse with their window. */
  constructor(options: RateLimitOptions, orm?: MikroORM) {
    this.options = options;
    this.orm = orm;
  }

  /** Counts one request of the token; answers 429 with Retry-After once the window's budget is spent. */
  async admit(em: EntityManager, tokenId: string, instance: string): Promise<Response | undefined> {
    for (;;) {
      const block = this.blocks.get(tokenId);
      const now = Date.now();
      if (block && block.left > 0 && now < block.endsAt && now < block.reconcileAt) {
        block.left--;
        return undefined;
      }
      const inFlight = this.reserving.get(tokenId);
      if (!inFlight) break;
      // Another request of this token is reserving: its block may serve this one too.
      await inFlight.catch(() => {});
    }
    const reservation = this.reserve(em, tokenId);
    this.reserving.set(tokenId, reservation);
    try {
      const retryAfter = await reservation;
      if (retryAfter === undefined) return undefined;
      const { maxRequests, windowSeconds } = this.options;
      return problemResponse(
        {
          title: 'Too many requests',
          status: 429,
          code: 'RATE_LIMITED',
          detail: `This API token may send ${maxRequests} requests per ${windowSeconds} s; retry in ${retryAfter} s.`,
          instance,
        },
        { 'retry-after': String(retryAfter) },
      );
    } finally {
      if (this.reserving.get(tokenId) === reservation) this.reserving.delete(tokenId);
    }
  }

  /** Reserves a block and takes one request of it; the whole seconds to wait when nothing was granted. */
  private async reserve(em: EntityManager, tokenId: string): Promise<number | undefined> {
    const { maxRequests, windowSeconds } = this.options;
    const previous = this.blocks.get(tokenId);
    const now = Date.now();
    const usedUp = previous !== undefined && previous.left === 0 && now < previous.reconcileAt;
    const size = Math.min(
      largestBlock(maxRequests),
      previous === undefined ? 1 : usedUp ? previous.size * 2 : Math.max(1, previous.size - previous.left),
    );
    const unused = previous && now < previous.endsAt ? previous.left : 0;
    this.blocks.delete(tokenId);
    const [row] = await em.execute<{ granted: number; window_start: string; ms_left: number }[]>(
      'select granted, window_start, ms_left from rate_limit_reserve(?, ?, ?, ?, ?, ?)',
      [tokenId, size, maxRequests, windowSeconds, unused, previous?.windowStart ?? null],
    );
    if (!row) return 1;
    const reservedAt = Date.now();
    if (row.granted < 1) return Math.max(1, Math.ceil(row.ms_left / 1000));
    this.blocks.set(tokenId, {
      windowStart: row.window_start,
      size,
      left: row.granted - 1,
      endsAt: reservedAt + row.ms_left,
      reconcileAt: reservedAt + RECONCILE_MS,
    });
    if (row.granted > 1) this.startSweeper();
    return undefined;
  }

  private startSweeper(): void {
    if (this.sweeper || !this.orm) return;
    this.sweeper = setInterval(() => void this.sweep(), RECONCILE_MS);
    this.sweeper.unref();
  }

  /** Gives back what blocks past their reconcile time did not use, for tokens no request has touched since. */
  async sweep(now = Date.now()): Promise<void> {
    const connection = this.orm?.em.getConnection();
    if (!connection) return;
    for (const [tokenId, block] of this.blocks) {
      if (now < block.reconcileAt || this.reserving.has(tokenId)) continue;
      this.blocks.delete(tokenId);
      if (block.left === 0 || now >= block.endsAt) continue;
      await connection
        .execute('select rate_limit_release(?, ?, ?)', [tokenId, block.left, block.windowStart])
        .catch(() => {
          // Unreturned, the requests lapse with their window: the limit only gets stricter.
        });
    }
    if (this.blocks.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}
