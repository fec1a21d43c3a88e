import pg from 'pg';

/** The channel the fence's upsert (fenceReplicaReads) notifies: `<token id> <lsn>`. */
export const FENCE_CHANNEL = 'replica_read_fence_moved';

/** How long a token's fence is trusted without a fresh read (notifications keep it current meanwhile). */
export const FENCE_CACHE_MS = 5_000;

const MAX_ENTRIES = 10_000;
const RECONNECT_MS = 1_000;

/** A pg_lsn (`16/B374D848`) as a number that orders as the positions do. */
export function lsnValue(lsn: string): bigint {
  const [high = '0', low = '0'] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/** The later of two fences (null: the token never wrote). */
function later(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return lsnValue(a) >= lsnValue(b) ? a : b;
}

type Entry = { lsn: string | null; expiresAt: number };

/**
 * Spares a replica read its fence lookup on the primary (read-your-writes, see beginOnReplica): each
 * process keeps a token's fence (the primary's WAL position after its last write, or none) for
 * FENCE_CACHE_MS. A fence only ever moves forward, and every move is announced: the upsert that moves it
 * notifies FENCE_CHANNEL with the token and the new position, in the same statement, so PostgreSQL sends
 * it at that commit (before the writing process has its answer). Every process LISTENs on a session of
 * its own and moves its entry forward (creating it when absent); the writing process also moves its own
 * entry as soon as the upsert returns. Entries are merged by taking the later position, so a lookup that
 * read the table before a move cannot put an older fence back.
 *
 * It serves nothing while that session is not listening: every read then looks its fence up as before,
 * and a reconnect empties it (notifications sent meanwhile are lost); a lookup that started before the
 * reconnect is not stored.
 */
export class FenceCache {
  private readonly entries = new Map<string, Entry>();
  private client: pg.Client | null = null;
  private listening = false;
  private closed = false;
  private generationCount = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly connectionString: string;
  private readonly ttlMs: number;

  constructor(connectionString: string, ttlMs = FENCE_CACHE_MS) {
    this.connectionString = connectionString;
    this.ttlMs = ttlMs;
  }

  /**
   * Connects the listening session; resolves once notifications are being received, or once the
   * attempt failed (it is then retried every second, and the cache serves nothing meanwhile).
   */
  async listen(): Promise<void> {
    await this.start().catch(() => {
      if (this.client) this.lost(this.client);
    });
  }

  private async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on('notification', ({ payload }) => {
      const [tokenId, lsn] = (payload ?? '').split(' ');
      if (tokenId && lsn) this.moved(tokenId, lsn);
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    this.client = client;
    await client.connect();
    await client.query(`listen ${FENCE_CHANNEL}`);
    if (this.closed || this.client !== client) {
      await client.end().catch(() => {});
      return;
    }
    this.clear();
    this.listening = true;
  }

  /** Whether fences are served from memory (the listening session is up). */
  get active(): boolean {
    return this.listening;
  }

  /** A marker to pass to `set`: a reconnect in between makes that `set` a no-op. */
  generation(): number {
    return this.generationCount;
  }

  /** The token's fence: a position, null when it never wrote, undefined when not known here. */
  get(tokenId: string, now = Date.now()): string | null | undefined {
    if (!this.listening) return undefined;
    const entry = this.entries.get(tokenId);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(tokenId);
      return undefined;
    }
    return entry.lsn;
  }

  /** Stores what a lookup read (merged with what arrived meanwhile); returns the fence to use. */
  set(tokenId: string, lsn: string | null, generation: number, now = Date.now()): string | null {
    if (!this.listening || generation !== this.generationCount) return lsn;
    const entry = this.entries.get(tokenId);
    const merged = entry ? later(entry.lsn, lsn) : lsn;
    this.put(tokenId, merged, now);
    return merged;
  }

  /** The token's fence moved to `lsn` (its write in this process, or a notification). */
  moved(tokenId: string, lsn: string, now = Date.now()): void {
    if (!this.listening) return;
    // Positions only move forward: even an expired entry's is a lower bound of the fence.
    const entry = this.entries.get(tokenId);
    if (entry && entry.expiresAt > now) entry.lsn = later(entry.lsn, lsn);
    else this.put(tokenId, later(entry?.lsn ?? null, lsn), now);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    clearTimeout(this.reconnectTimer);
    this.clear();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  private put(tokenId: string, lsn: string | null, now: number): void {
    this.entries.delete(tokenId);
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(tokenId, { lsn, expiresAt: now + this.ttlMs });
  }

  private clear(): void {
    this.generationCount++;
    this.entries.clear();
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.listening = false;
    this.clear();
    this.client = null;
    client.end().catch(() => {});
    if (this.closed) return;
    this.reconnectTimer = setTimeout(() => {
      this.start().catch(() => this.lost(this.client ?? client));
    }, RECONNECT_MS);
    this.reconnectTimer.unref();
  }
}

/** Each ORM's cache (by its configuration, which its forks share); none without replicas. */
const caches = new WeakMap<object, FenceCache>();

export function registerFenceCache(config: object, cache: FenceCache): void {
  caches.set(config, cache);
}

export function fenceCacheOf(em: { config: object }): FenceCache | undefined {
  return caches.get(em.config);
}
