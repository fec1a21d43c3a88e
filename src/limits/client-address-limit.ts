import { problemResponse } from '../http/problem.ts';
import type { RateLimitOptions } from './rate-limit.ts';

/** Addresses tracked at most; past that, windows that have ended are forgotten first. */
const MAX_TRACKED_ADDRESSES = 100_000;

/** The peer address of the connection (Node's adapter passes its IncomingMessage as `req`). */
export function clientAddress(serverContext: unknown): string {
  const req = (serverContext as { req?: { socket?: { remoteAddress?: string } } } | undefined)?.req;
  return req?.socket?.remoteAddress ?? 'unknown';
}

/**
 * A fixed-window budget of failed authentications (no token, an unknown or revoked one, a missing or
 * forbidden environment) per client address. Once it is spent, every request from that address is
 * answered 429 before its token is even looked up, until the window ends: a flood of bad requests
 * costs no database work. The count is in this process's memory, not in PostgreSQL like the per-token
 * limit: counting each failure in the database would be the very work the flood should not cause,
 * and N processes let an address through at most N times the budget.
 */
export class ClientAddressLimiter {
  private readonly options: RateLimitOptions;
  private readonly windows = new Map<string, { start: number; failures: number }>();

  constructor(options: RateLimitOptions) {
    this.options = options;
  }

  /** The 429 answer while `address` has spent its budget, else undefined. */
  refusal(address: string, instance: string, now = Date.now()): Response | undefined {
    const window = this.current(address, now);
    if (!window || window.failures < this.options.maxRequests) return undefined;
    const retryAfter = Math.max(
      1,
      Math.ceil((window.start + this.options.windowSeconds * 1000 - now) / 1000),
    );
    return problemResponse(
      {
        title: 'Too many requests',
        status: 429,
        code: 'TOO_MANY_AUTH_FAILURES',
        detail: `This address sent ${this.options.maxRequests} requests that failed authentication within ${this.options.windowSeconds} s; retry in ${retryAfter} s.`,
        instance,
      },
      { 'retry-after': String(retryAfter) },
    );
  }

  /** Counts one failed authentication from `address`. */
  recordFailure(address: string, now = Date.now()): void {
    const window = this.current(address, now);
    if (window) {
      window.failures++;
      return;
    }
    if (this.windows.size >= MAX_TRACKED_ADDRESSES) this.forgetEnded(now);
    this.windows.set(address, { start: now, failures: 1 });
  }

  private current(address: string, now: number) {
    const window = this.windows.get(address);
    return window && now - window.start < this.options.windowSeconds * 1000 ? window : undefined;
  }

  private forgetEnded(now: number): void {
    for (const [address, window] of this.windows) {
      if (now - window.start >= this.options.windowSeconds * 1000) this.windows.delete(address);
    }
    // Still full of live windows: the oldest entries (Map keeps insertion order) make room.
    for (const address of this.windows.keys()) {
      if (this.windows.size < MAX_TRACKED_ADDRESSES) break;
      this.windows.delete(address);
    }
  }
}
