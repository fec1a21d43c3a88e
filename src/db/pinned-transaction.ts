import type { CompiledQuery, QueryResult } from 'kysely';
import pg from 'pg';
import { DatabaseClient } from './unavailable.ts';

type Rows = Record<string, unknown>[];

/** The client while the transaction lasts, and its last statement (settled, never failing). */
type Pin = { client: pg.PoolClient | undefined; last: Promise<unknown> };

/** pg's own query (with the statement names of `prepared` and errors marked as the database's). */
const send = DatabaseClient.prototype.query as unknown as (
  this: pg.PoolClient,
  text: string,
  values?: unknown[],
) => Promise<pg.QueryResult>;

/** Commands whose row count is the rows they changed (Kysely's numAffectedRows). */
const CHANGING = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/**
 * A transaction held on one pooled `pg` client, for an environment's transaction (inEnvironment): what
 * MikroORM uses of its transaction context (Kysely's ControlledTransaction) without Kysely's builder,
 * executor and connection provider, which cost more CPU than the round trips themselves on a short
 * read. MikroORM's statements (`em.execute`, the query builder, flushes) run through `executeQuery`,
 * nested `em.transactional()` calls take savepoints (`savepoint`), and the lean reads and writes send
 * their statements with `rows` directly.
 *
 * Every statement goes out on the client as it is (BEGIN went out with the confinement already; see
 * begin), in order: pg queues a client's queries. Once the transaction has ended the client is back in
 * the pool, possibly in another request's transaction, so nothing can be sent through this object any
 * more: it refuses.
 */
export class PinnedTransaction {
  /** The client while the transaction lasts, shared with its savepoints' contexts. */
  readonly #pin: Pin;
  isCommitted = false;
  isRolledBack = false;

  private constructor(pin: Pin) {
    this.#pin = pin;
  }

  /**
   * Takes a client from `pool` and opens a transaction on it with `confine` (a `select set_config(…)`
   * of written-in literals) in the same round trip as BEGIN. The client goes back to the pool if that fails.
   */
  static async begin(pool: pg.Pool, confine: string): Promise<PinnedTransaction> {
    const client = await pool.connect();
    try {
      await send.call(client, `begin; ${confine}`);
    } catch (error) {
      // A failed BEGIN block left the transaction open and failed: end it before the client is reused.
      const usable = await send.call(client, 'rollback').then(
        () => true,
        () => false,
      );
      client.release(usable ? undefined : (error as Error));
      throw error;
    }
    return new PinnedTransaction({ client, last: Promise.resolve() });
  }

  /** The rows `text` (with $n placeholders, or a name marked `prepared`) answers for `values`. */
  async rows(text: string, values: unknown[]): Promise<Rows> {
    return (await this.#send(text, values)).rows as Rows;
  }

  /** A statement as Kysely's executor would run it (MikroORM's `em.execute`, query builder, flush). */
  async executeQuery<R>(query: CompiledQuery<R>, abort?: unknown): Promise<QueryResult<R>> {
    if (abort !== undefined) throw new Error('a statement in an environment transaction cannot be aborted');
    const { command, rowCount, rows } = await this.#send(query.sql, [...query.parameters]);
    return {
      rows: rows as R[],
      numAffectedRows: CHANGING.has(command) && rowCount !== null ? BigInt(rowCount) : undefined,
    };
  }

  /** As Kysely's: MikroORM waits on it for the connection to be idle before a rollback. */
  getExecutor(): { provideConnection<T>(consume: (connection: unknown) => Promise<T>): Promise<T> } {
    return {
      provideConnection: async (consume) => {
        await this.#pin.last;
        return consume(this);
      },
    };
  }

  commit(): { execute(): Promise<void> } {
    return { execute: () => this.#end('commit') };
  }

  rollback(): { execute(): Promise<void> } {
    return { execute: () => this.#end('rollback') };
  }

  /** A savepoint: a nested transaction on the same client, as MikroORM's nested `transactional()` takes. */
  savepoint(name: string): { execute(): Promise<PinnedTransaction> } {
    return {
      execute: async () => {
        await this.#send(`savepoint ${pg.escapeIdentifier(name)}`, []);
        // MikroORM marks a savepoint's context with its name and depth: an object of its own.
        return new PinnedTransaction(this.#pin);
      },
    };
  }

  releaseSavepoint(name: string): { execute(): Promise<PinnedTransaction> } {
    return {
      execute: async () => {
        await this.#send(`release savepoint ${pg.escapeIdentifier(name)}`, []);
        return this;
      },
    };
  }

  rollbackToSavepoint(name: string): { execute(): Promise<PinnedTransaction> } {
    return {
      execute: async () => {
        await this.#send(`rollback to savepoint ${pg.escapeIdentifier(name)}`, []);
        return this;
      },
    };
  }

  /** Sends `text` once the statement before it is answered: pg would queue it, but warns of it. */
  #send(text: string, values: unknown[]): Promise<pg.QueryResult> {
    const pin = this.#pin;
    const { client } = pin;
    if (!client)
      return Promise.reject(new Error('the transaction has ended: its connection is back in the pool'));
    const sent = pin.last.then(() => send.call(client, text, values));
    pin.last = sent.catch(() => {});
    return sent;
  }

  async #end(how: 'commit' | 'rollback'): Promise<void> {
    const pin = this.#pin;
    const { client } = pin;
    if (!client) return;
    // Nothing may be sent through this transaction from here on: its client goes back to the pool.
    pin.client = undefined;
    await pin.last;
    try {
      await send.call(client, how);
    } catch (error) {
      // The connection is broken or in an unknown state: the pool must not hand it out again.
      client.release(error as Error);
      throw error;
    }
    client.release();
    if (how === 'commit') this.isCommitted = true;
    else this.isRolledBack = true;
  }
}
