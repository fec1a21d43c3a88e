import type { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { EventListener, EventScope, OwnerQuery, PublishedEvent } from '../../jobs/runner.ts';
import type { Logger } from '../../logger.ts';
import { EVENT_CHANNEL } from './event.feed.ts';

/** A listener's job for one event, as graphile-worker adds it: one per task and event (its key). */
export type ListenerJob = { identifier: string; payload: PublishedEvent; jobKey: string };

/**
 * The jobs that hand `events` to the listeners that want them: one per event and listener of its type
 * whose `wants` (if any) answers true. A listener's `wantsAll` is asked once for all the environments and
 * types of the batch when `query` (the relay's owner connection) is given; otherwise `wants` is asked
 * once per listener, environment and type of the batch, one after the other.
 */
export async function listenerJobs(
  events: readonly PublishedEvent[],
  listeners: readonly EventListener[],
  orm: MikroORM,
  query?: OwnerQuery,
): Promise<ListenerJob[]> {
  const jobs: ListenerJob[] = [];
  const wanted: (Map<string, boolean> | undefined)[] = [];
  for (const listener of listeners) wanted.push(await wantedScopes(events, listener, orm, query));
  for (const { eventId, environmentId, type } of events) {
    for (const [index, { task, types }] of listeners.entries()) {
      if (types !== 'all' && !types.includes(type)) continue;
      if (wanted[index]?.get(`${environmentId} ${type}`) === false) continue;
      jobs.push({
        identifier: task,
        payload: { eventId, environmentId, type },
        jobKey: `${task}:${eventId}`,
      });
    }
  }
  return jobs;
}

/** A listener's answer for each environment and type of `events` (by `<environment> <type>`), if it asks. */
async function wantedScopes(
  events: readonly PublishedEvent[],
  { types, wants, wantsAll }: EventListener,
  orm: MikroORM,
  query: OwnerQuery | undefined,
): Promise<Map<string, boolean> | undefined> {
  // A listener that does not ask (or cannot here: `wantsAll` alone without the owner's connection) gets
  // every event of its types; its task decides.
  if (!wants && !(wantsAll && query)) return undefined;
  const scopes = new Map<string, EventScope>();
  for (const { environmentId, type } of events) {
    if (types !== 'all' && !types.includes(type)) continue;
    scopes.set(`${environmentId} ${type}`, { environmentId, type });
  }
  const answers = new Map<string, boolean>();
  if (scopes.size === 0) return answers;
  if (wantsAll && query) {
    const asked = [...scopes.entries()];
    const wanted = await wantsAll(
      asked.map(([, scope]) => scope),
      query,
    );
    for (const [i, [key]] of asked.entries()) answers.set(key, wanted[i] === true);
    return answers;
  }
  for (const [key, scope] of scopes) answers.set(key, (await wants?.(scope, orm)) ?? true);
  return answers;
}

export type EventRelayOptions = {
  /** The database owner's URL, direct or session-pooled: the relay LISTENs, and only the owner reads the outbox. */
  connectionString: string;
  orm: MikroORM;
  listeners: readonly EventListener[];
  logger: Logger;
  /** Outbox rows taken in one transaction (500). */
  batchSize?: number;
  /** Shortest time between the starts of two batches, so that events arriving together share one (200 ms). */
  minIntervalMs?: number;
  /** A look at the outbox this often whatever was notified: notifications are lost while nobody listens (5 s). */
  sweepMs?: number;
  /** Wait after a failed batch before the next try (1 s). */
  retryMs?: number;
};

/** What one batch did: outbox rows taken (and deleted), listener jobs added. */
export type RelayBatch = { taken: number; jobs: number };

/**
 * Takes each committed event's outbox row (Migration20261126000000EventOutbox) and adds the jobs of
 * the listeners that want the event. One transaction per batch takes the rows (`for update skip
 * locked`, so concurrent relays of several processes never take the same row), adds the jobs
 * (graphile-worker's `add_jobs`, keyed `<task>:<eventId>`) and deletes the rows: a row is handed out
 * exactly once, and a batch cut off by a crash leaves its rows for the next relay.
 *
 * It wakes on the `billing_event` notification every event's commit sends (no write pays for a
 * notification of its own), at most once every `minIntervalMs`, and sweeps every `sweepMs` for rows
 * whose notification no relay heard (written while none listened, or while its connection was lost).
 * One dedicated connection serves the LISTEN and the batches.
 */
export class EventRelay {
  private readonly options: Required<EventRelayOptions>;
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private notBefore = 0;
  private stopped = false;

  constructor(options: EventRelayOptions) {
    this.options = { batchSize: 500, minIntervalMs: 200, sweepMs: 5000, retryMs: 1000, ...options };
  }

  /** Connects and listens (failing if it cannot), then relays what is waiting and whatever comes. */
  async start(): Promise<void> {
    await this.connection();
    this.sweeper = setInterval(() => this.wake(), this.options.sweepMs);
    this.sweeper.unref();
    this.wake();
  }

  /** Stops waking, lets a batch under way finish, and closes the connection. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.sweeper) clearInterval(this.sweeper);
    this.timer = null;
    this.sweeper = null;
    await this.running;
    await this.drop();
  }

  /**
   * One batch: takes up to `batchSize` outbox rows, adds the wanted listeners' jobs and deletes the
   * rows, in one transaction. Rolled back (the rows left for a later batch) if anything fails.
   */
  async relayBatch(): Promise<RelayBatch> {
    const client = await this.connection();
    try {
      const results = (await client.query(
        `begin;
         with taken as (
           select event_id from event_relay.outbox order by event_id limit ${this.options.batchSize}
           for update skip locked
         )
         delete from event_relay.outbox o using taken where o.event_id = taken.event_id
         returning o.event_id, o.environment_id, o.type`,
      )) as unknown as pg.QueryResult<{ event_id: string; environment_id: string; type: string }>[];
      const events = (results[1]?.rows ?? [])
        .map((row) => ({ eventId: row.event_id, environmentId: row.environment_id, type: row.type }))
        .sort((a, b) => (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0));
      // Listeners that can answer for the whole batch do so in one read on this connection, as the owner.
      const query: OwnerQuery = async <R>(sql: string, params: unknown[]) =>
        (await client.query(sql, params)).rows as R[];
      const jobs =
        events.length > 0 ? await listenerJobs(events, this.options.listeners, this.options.orm, query) : [];
      const specs = jobs.map(({ identifier, payload, jobKey }) => ({ identifier, payload, job_key: jobKey }));
      // The jobs and the commit in one round trip (a literal, so that both fit one simple query).
      await client.query(
        specs.length > 0
          ? `select count(*) from graphile_worker.add_jobs(array(
               select json_populate_recordset(null::graphile_worker.job_spec, ${client.escapeLiteral(JSON.stringify(specs))}::json)
             ));
             commit`
          : 'commit',
      );
      return { taken: events.length, jobs: jobs.length };
    } catch (error) {
      await client.query('rollback').catch(() => {});
      throw error;
    }
  }

  /** Relays soon: now if the last batch started long enough ago, else once `minIntervalMs` has passed. */
  private wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    const wait = Math.max(0, this.notBefore - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.run().finally(() => {
        this.running = null;
        if (this.again) this.wake();
      });
    }, wait);
  }

  /** Batches until the outbox has no more rows for this relay (a short batch). */
  private async run(): Promise<void> {
    this.again = false;
    this.notBefore = Date.now() + this.options.minIntervalMs;
    try {
      for (;;) {
        const batch = await this.relayBatch();
        if (batch.taken > 0) this.options.logger.debug(batch, 'relayed events to their listeners');
        if (batch.taken < this.options.batchSize || this.stopped) return;
      }
    } catch (error) {
      // Tried again on the next notification or sweep, not before `retryMs`.
      this.notBefore = Date.now() + this.options.retryMs;
      this.options.logger.warn({ err: error }, 'the event relay failed a batch; it tries again');
    }
  }

  /** The relay's connection, listening; a new one if the last was lost. */
  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.options.connectionString });
      client.on('notification', () => this.wake());
      client.on('error', (error) => {
        this.options.logger.warn({ err: error }, 'the event relay lost its database connection');
        if (this.client === client) this.client = null;
        client.end().catch(() => {});
      });
      // Ended without an error (the server closed it): the next batch connects again.
      client.on('end', () => {
        if (this.client === client) this.client = null;
      });
      try {
        await client.connect();
        await client.query(`listen ${EVENT_CHANNEL}`);
      } catch (error) {
        await client.end().catch(() => {});
        throw error;
      }
      this.client = client;
      return client;
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async drop(): Promise<void> {
    const client = this.client ?? (await this.connecting?.catch(() => null)) ?? null;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
