import pg from 'pg';
import type { Logger } from '../logger.ts';
import type { ApiToken } from './api-token.entity.ts';

/** The channel a trigger on api_token notifies when a token is revoked, deleted or its grants change. */
export const TOKEN_CHANNEL = 'api_token_changed';

/** How many tokens one process keeps; beyond it the oldest entry is dropped. */
const MAX_ENTRIES = 10_000;
const RECONNECT_MS = 1_000;

type Entry = { token: ApiToken; expiresAt: number; lastUsedAt: number | null };

/**
 * Spares the per-request token lookup: a token found by its secret's digest is kept for `ttlMs`, and
 * forgotten by every process the moment any process (or the CLI, or SQL) revokes it, deletes it or
 * changes its grants: a trigger on api_token notifies TOKEN_CHANNEL, and this cache LISTENs on its own
 * dedicated connection (a session that must outlive transactions, so never one of the pool's, which a
 * transaction-mode PgBouncer would hand to others; point it past PgBouncer if one sits in front).
 *
 * It serves nothing unless that connection is listening: until it is (re)connected every lookup goes to
 * the database, and a reconnect empties the cache, since notifications sent while it was down are
 * lost. A lookup whose read started before a notification arrived is not stored (a generation count),
 * so a read racing a revocation cannot put the revoked token back.
 */
export class TokenCache {
  private readonly entries = new Map<string, Entry>();
  private client: pg.Client | null = null;
  private listening = false;
  private closed = false;
  private generationCount = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly connectionString: string;
  private readonly ttlMs: number;
  private readonly logger: Logger | undefined;

  constructor(connectionString: string, ttlMs: number, logger?: Logger) {
    this.connectionString = connectionString;
    this.ttlMs = ttlMs;
    this.logger = logger;
  }

  /** Connects the listening session; resolves once notifications are being received. */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on('notification', () => this.invalidate());
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    this.client = client;
    await client.connect();
    await client.query(`listen ${TOKEN_CHANNEL}`);
    if (this.closed || this.client !== client) {
      await client.end().catch(() => {});
      return;
    }
    this.invalidate();
    this.listening = true;
  }

  /** Whether lookups are being served from memory (the listening session is up). */
  get active(): boolean {
    return this.listening;
  }

  /** A marker to pass to `set`: a notification arriving in between makes that `set` a no-op. */
  generation(): number {
    return this.generationCount;
  }

  get(secretHash: string, now = Date.now()): ApiToken | undefined {
    if (!this.listening) return undefined;
    const entry = this.entries.get(secretHash);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(secretHash);
      return undefined;
    }
    return entry.token;
  }

  set(secretHash: string, token: ApiToken, generation: number, now = Date.now()): void {
    if (!this.listening || generation !== this.generationCount) return;
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(secretHash, {
      token,
      expiresAt: now + this.ttlMs,
      lastUsedAt: token.lastUsedAt?.getTime() ?? null,
    });
  }

  /** When this process last knew the token to be used (the row's lastUsedAt, or its own later write). */
  lastUsedAt(secretHash: string): number | null | undefined {
    return this.entries.get(secretHash)?.lastUsedAt;
  }

  touched(secretHash: string, at: number): void {
    const entry = this.entries.get(secretHash);
    if (entry) entry.lastUsedAt = at;
  }

  /** Forgets every token: revocations are rare, and a whole-cache flush cannot miss one. */
  invalidate(): void {
    this.generationCount++;
    this.entries.clear();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    clearTimeout(this.reconnectTimer);
    this.invalidate();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  private lost(client: pg.Client, error?: Error): void {
    if (this.client !== client) return;
    this.listening = false;
    this.invalidate();
    this.client = null;
    if (this.closed) return;
    this.logger?.warn(
      { err: error },
      'the token cache lost its listening connection; tokens are read per request until it is back',
    );
    client.end().catch(() => {});
    this.reconnectTimer = setTimeout(() => {
      this.start().catch((reason) => this.lost(this.client ?? client, reason as Error));
    }, RECONNECT_MS);
    this.reconnectTimer.unref();
  }
}
