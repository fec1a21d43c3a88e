import type { EntityManager } from '@mikro-orm/postgresql';
import { problemResponse } from '../http/problem.ts';

export type RateLimitOptions = { maxRequests: number; windowSeconds: number };

/**
 * A fixed-window request limit per API token. The counter is a row in PostgreSQL, so every server
 * process shares it; the window opens with the token's first request and lasts `windowSeconds`, and
 * the database's clock decides, so processes on skewed clocks still agree.
 */
export class RateLimiter {
  private readonly options: RateLimitOptions;

  constructor(options: RateLimitOptions) {
    this.options = options;
  }

  /** Counts one request of the token; answers 429 with Retry-After once the window's budget is spent. */
  async admit(em: EntityManager, tokenId: string, instance: string): Promise<Response | undefined> {
    const { maxRequests, windowSeconds } = this.options;
    const [counter] = await em.execute<{ request_count: number; retry_after: number }[]>(
      `insert into rate_limit_counter as counter (token_id, window_start, request_count) values (?, now(), 1)
       on conflict (token_id) do update set
         window_start = case when counter.window_start <= now() - make_interval(secs => ?)
           then now() else counter.window_start end,
         request_count = case when counter.window_start <= now() - make_interval(secs => ?)
           then 1 else counter.request_count + 1 end
       returning request_count,
         greatest(1, ceil(extract(epoch from window_start + make_interval(secs => ?) - now())))::int as retry_after`,
      [tokenId, windowSeconds, windowSeconds, windowSeconds],
    );
    if (!counter || counter.request_count <= maxRequests) return undefined;
    return problemResponse(
      {
        title: 'Too many requests',
        status: 429,
        code: 'RATE_LIMITED',
        detail: `This API token may send ${maxRequests} requests per ${windowSeconds} s; retry in ${counter.retry_after} s.`,
        instance,
      },
      { 'retry-after': String(counter.retry_after) },
    );
  }
}
