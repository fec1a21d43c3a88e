import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { stringify } from 'safe-stable-stringify';
import type { RequestContext } from '../context.ts';
import { deleteInEveryEnvironment, markRollbackOnly } from '../db/tenant-transaction.ts';
import { DomainError } from '../errors.ts';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';
/** A completed response is replayed for at least this long; older keys are purged and may be reused. */
export const IDEMPOTENCY_RETENTION_HOURS = 24;

const VISIBLE_ASCII = /^[\x21-\x7e]{1,255}$/;

/** A response as it is stored and replayed: JSON bodies only, so text is enough. */
export type ReplayableResponse = { status: number; headers: Record<string, string>; body: string | null };

export type IdempotentResponse = ReplayableResponse & { replayed: boolean };

type StoredParts = { data?: Record<string, unknown> };

type StoredRow = {
  fingerprint: string;
  response_status: number;
  response_headers: Record<string, string>;
  response_body: string | null;
};

/** The request's Idempotency-Key, or undefined when it sends none; a malformed key is refused. */
export function idempotencyKeyOf(request: Request): string | undefined {
  const key = request.headers.get(IDEMPOTENCY_KEY_HEADER);
  if (key === null) return undefined;
  if (!VISIBLE_ASCII.test(key)) {
    throw new DomainError(
      'INVALID_INPUT',
      'The Idempotency-Key header must be 1 to 255 visible ASCII characters.',
    );
  }
  return key;
}

/** What makes two requests the same: their target and their payload, whatever its key order or spacing. */
export function requestFingerprint(target: string, payload: unknown): string {
  return createHash('sha256')
    .update(target)
    .update('\n')
    .update(stringify(payload) ?? '')
    .digest('hex');
}

/** The advisory lock a request holds while it runs under `key`. */
export const idempotencyLockName = (environmentId: string, tokenId: string, key: string): string =>
  `idempotency:${environmentId}:${tokenId}:${key}`;

/**
 * Runs a request at most once per (environment, token, key). It runs inside the request's transaction
 * (inRequestTransaction), so the work and its stored response commit together: there is no window in
 * which the work is done but the response is not stored (or the other way round). A duplicate that
 * arrives while the first still runs finds the key's advisory lock taken and is refused (409) instead
 * of waiting. Only successes are stored: a response of 400 or more rolls the transaction back, so a
 * retry runs afresh.
 */
export class IdempotencyService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  async run(
    key: string,
    fingerprint: string,
    work: (ctx: RequestContext) => Promise<ReplayableResponse>,
  ): Promise<IdempotentResponse> {
    const stored = await this.claim(key, fingerprint);
    if (stored) {
      return {
        status: stored.response_status,
        headers: stored.response_headers,
        body: stored.response_body,
        replayed: true,
      };
    }
    const response = await work(this.ctx);
    if (response.status >= 400) {
      markRollbackOnly(this.ctx.em);
      return { ...response, replayed: false };
    }
    await this.save(key, fingerprint, response);
    return { ...response, replayed: false };
  }

  /**
   * One part of a request that commits part by part (a root field of a GraphQL mutation), in that
   * part's own transaction: the part's stored value when a request under the key committed it before,
   * otherwise `work`'s, stored with the key in this transaction when there is one. `work` answers
   * undefined for a failure: that rolls back and is not stored, so a retry runs the part afresh. The
   * stored body is `{ "data": { <part>: <value>, … } }`, a GraphQL result of the parts that succeeded.
   */
  async runPart<T>(
    key: string,
    fingerprint: string,
    part: string,
    work: () => Promise<T | undefined>,
  ): Promise<{ value: T | undefined; replayed: boolean }> {
    const stored = await this.claim(key, fingerprint);
    const parts = stored ? (JSON.parse(stored.response_body ?? '{}') as StoredParts).data : {};
    if (parts && Object.hasOwn(parts, part)) return { value: parts[part] as T, replayed: true };
    const value = await work();
    if (value === undefined) {
      markRollbackOnly(this.ctx.em);
      return { value, replayed: false };
    }
    const body: StoredParts = { data: { ...parts, [part]: value } };
    await this.save(key, fingerprint, { status: 200, headers: {}, body: JSON.stringify(body) });
    return { value, replayed: false };
  }

  /**
   * Takes the key's lock for this transaction and answers what is stored under the key (undefined
   * when nothing is); refuses the request while another holds the lock (409) and when the key was
   * used for a different request (422).
   */
  private async claim(key: string, fingerprint: string): Promise<StoredRow | undefined> {
    const { em, environmentId, token } = this.ctx;
    if (!em.isInTransaction()) {
      throw new Error('IdempotencyService needs the request transaction (inRequestTransaction)');
    }
    const [lock] = await em.execute<{ acquired: boolean }[]>(
      'select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as acquired',
      [idempotencyLockName(environmentId, token.id, key)],
    );
    if (!lock?.acquired) {
      throw new DomainError(
        'IDEMPOTENCY_IN_FLIGHT',
        'A request with this Idempotency-Key is still being processed; retry when it has finished.',
      );
    }
    const stored = await this.find(em, key);
    if (stored && stored.fingerprint !== fingerprint) {
      throw new DomainError(
        'IDEMPOTENCY_MISMATCH',
        'This Idempotency-Key was already used for a different request; use a new key.',
      );
    }
    return stored;
  }

  /** Stores the response under the key, replacing an expired one not purged yet. */
  private async save(key: string, fingerprint: string, response: ReplayableResponse): Promise<void> {
    const { em, environmentId, token } = this.ctx;
    await em.execute(
      `insert into idempotency_key
         (environment_id, token_id, key, fingerprint, response_status, response_headers, response_body, created_at)
       values (?, ?, ?, ?, ?, ?::jsonb, ?, now())
       on conflict (environment_id, token_id, key) do update set
         fingerprint = excluded.fingerprint, response_status = excluded.response_status,
         response_headers = excluded.response_headers, response_body = excluded.response_body,
         created_at = excluded.created_at`,
      [
        environmentId,
        token.id,
        key,
        fingerprint,
        response.status,
        JSON.stringify(response.headers),
        response.body,
      ],
    );
  }

  /** The stored response for `key`, unless it is older than the retention period (then it is free again). */
  private async find(em: EntityManager, key: string): Promise<StoredRow | undefined> {
    const [row] = await em.execute<StoredRow[]>(
      `select fingerprint, response_status, response_headers, response_body from idempotency_key
       where environment_id = ? and token_id = ? and key = ?
         and created_at > now() - make_interval(hours => ?)`,
      [this.ctx.environmentId, this.ctx.token.id, key, IDEMPOTENCY_RETENTION_HOURS],
    );
    return row;
  }
}

/** Deletes keys past the retention period, in every environment; returns how many. */
export function purgeExpiredIdempotencyKeys(em: EntityManager): Promise<number> {
  return deleteInEveryEnvironment(
    em,
    'delete from idempotency_key where created_at <= now() - make_interval(hours => ?)',
    [IDEMPOTENCY_RETENTION_HOURS],
  );
}
