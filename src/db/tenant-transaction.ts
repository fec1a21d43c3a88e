import { TransactionContext } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Transaction } from '@mikro-orm/sql';
import pg from 'pg';
import { readTransactionsTotal } from '../metrics.ts';
import { logStatement } from './lean.ts';
import { APP_ROLE } from './orm.ts';
import { PinnedTransaction } from './pinned-transaction.ts';

/** The setting the row-level security policies compare every tenant row's environment_id with. */
export const ENVIRONMENT_SETTING = 'app.environment_id';

const rollbackOnly = new WeakSet<EntityManager>();

/**
 * Runs `work` in one transaction that sees and writes only the rows of `environmentId`: the transaction
 * starts with `set_config('app.environment_id', <id>, true)` and `set local role billing_app` (in one
 * statement), both of which end with it, so a pooled connection never carries an environment over to the next user. It
 * commits when `work` returns (unless `markRollbackOnly` was called) and rolls back when it throws.
 *
 * Every request's database work runs in such a transaction (the REST router and a GraphQL plugin open
 * it), and work that is not a request, such as a scheduled job, calls this once per environment.
 * Services' own `em.transactional()` calls inside nest as savepoints.
 *
 * With `read` (a plain read on behalf of a token), the transaction may run read-only on a streaming
 * replica instead, under the same settings (see beginOnReplica).
 */
export async function inEnvironment<T>(
  em: EntityManager,
  environmentId: string,
  work: (em: EntityManager) => Promise<T>,
  read?: ReadRoute,
  { ownFork = false }: { ownFork?: boolean } = {},
): Promise<T> {
  // `ownFork`: `em` is the caller's own fork, fresh (an empty identity map) and used by nothing else
  // meanwhile (a REST request's): the transaction runs on it instead of on a fork of it. A fork costs
  // MikroORM a new EntityManager and two configuration writes (each setting process.env).
  const tx = ownFork ? em : em.fork({ clear: true });
  if (read && (await beginOnReplica(tx, environmentId, read.tokenId))) {
    try {
      return await runAndEnd(tx, work);
    } catch (error) {
      // Work that writes after all cannot on a replica: it runs again, on the primary.
      if ((error as { code?: string }).code !== READ_ONLY_TRANSACTION) throw error;
      readTransactionsTotal.labels('primary', 'write-attempted').inc();
      return inEnvironment(em, environmentId, work);
    }
  }
  await beginOnPrimary(tx, environmentId);
  if (read)
    readTransactionsTotal.labels('primary', hasReplicas(em) ? 'own-write-pending' : 'no-replica').inc();
  return runAndEnd(tx, work);
}

/**
 * Opens `tx`'s transaction on the primary, confined to `environmentId`: the environment's setting and,
 * so that the transaction is confined even on an ORM that connects as the owner, the role
 * (set_config('role', …, true) is `set local role`), both ending with it, sent with BEGIN in one round trip.
 *
 * On a pooled client of its own (PinnedTransaction), not through `tx.begin()`: Kysely's transaction
 * and executor layers and MikroORM's begin cost more CPU than the round trip itself on a short read.
 */
async function beginOnPrimary(tx: EntityManager, environmentId: string): Promise<void> {
  const variables = { [ENVIRONMENT_SETTING]: environmentId, role: APP_ROLE };
  // Statements `tx` sends outside a transaction (after it) are still confined, as ever.
  tx.setSessionContext({ variables });
  const confine = `select ${Object.entries(variables)
    .map(([name, value]) => `set_config(${pg.escapeLiteral(name)}, ${pg.escapeLiteral(value)}, true)`)
    .join(', ')}`;
  const started = performance.now();
  const trx = await PinnedTransaction.begin(await poolOf(tx), confine);
  logStatement(tx, `begin; ${confine}`, [], started, 0);
  tx.setTransactionContext(trx as unknown as Transaction);
}

const pools = new WeakMap<object, pg.Pool>();

/** The `pg` pool under `em`'s primary connection. */
async function poolOf(em: EntityManager): Promise<pg.Pool> {
  const connection = em.getConnection('write');
  let pool = pools.get(connection);
  if (!pool) {
    pool = (await connection.getNativeClient()) as pg.Pool;
    pools.set(connection, pool);
  }
  return pool;
}

/**
 * Ends `tx`'s transaction: `commit` flushes what the unit of work holds first, as `tx.commit()`
 * does, and `rollback` drops what it had queued, as `tx.rollback()` does; without their events.
 */
async function end(tx: EntityManager, how: 'commit' | 'rollback'): Promise<void> {
  const trx = tx.getTransactionContext<Transaction>();
  if (!trx) return;
  const connection = tx.getConnection('write');
  if (how === 'commit') {
    if (holdsEntities(tx)) await tx.flush();
    await connection.commit(trx);
  } else {
    await connection.rollback(trx);
    tx.getUnitOfWork().clearActionsQueue();
  }
  tx.resetTransactionContext();
}

/**
 * Whether `em`'s unit of work holds an entity a flush could write: one it manages (loaded or flushed),
 * persisted or removed. Work that reads and writes through lean statements leaves it empty, and the
 * flush of an empty unit of work (its flush events, change sets computed over nothing) writes nothing.
 */
function holdsEntities(em: EntityManager): boolean {
  const uow = em.getUnitOfWork();
  return (
    uow.getPersistStack().size > 0 ||
    uow.getRemoveStack().size > 0 ||
    uow.getOrphanRemoveStack().size > 0 ||
    !uow.getIdentityMap()[Symbol.iterator]().next().done
  );
}

/** Runs `work` in `tx`'s open transaction, then commits it (rolls back when asked to or when it throws). */
async function runAndEnd<T>(tx: EntityManager, work: (em: EntityManager) => Promise<T>): Promise<T> {
  try {
    // Code that reaches for the global EntityManager inside `work` gets this transaction's.
    const result = await TransactionContext.create(tx, () => work(tx));
    await end(tx, rollbackOnly.has(tx) ? 'rollback' : 'commit');
    return result;
  } catch (error) {
    // A failed statement or a lost connection already ended the transaction on the server; the
    // rollback only frees the connection, and its own failure must not hide the original error.
    if (tx.isInTransaction()) await end(tx, 'rollback').catch(() => {});
    throw error;
  }
}

/** A plain read on behalf of a token: it may be served by a replica (DATABASE_REPLICA_URLS). */
export type ReadRoute = { tokenId: string };

/** SQLSTATE read_only_sql_transaction: a write attempted in a read-only transaction. */
const READ_ONLY_TRANSACTION = '25006';

function hasReplicas(em: EntityManager): boolean {
  return (em.config.get('replicas') ?? []).length > 0;
}

/**
 * Opens `tx`'s transaction on a replica, read-only, with the same environment and role settings as on
 * the primary (`set local`, so they end with it), when there is a replica and it has replayed the
 * token's last write (read-your-writes): the primary's WAL position recorded after that write committed
 * (fenceReplicaReads), compared with the replica's pg_last_wal_replay_lsn() in the transaction's first
 * statement. A token that never wrote reads from a replica however far behind it is. Returns false,
 * with nothing left open, when the read must go to the primary instead.
 */
async function beginOnReplica(tx: EntityManager, environmentId: string, tokenId: string): Promise<boolean> {
  if (!hasReplicas(tx)) return false;
  const [fence] = await tx
    .getConnection('write')
    .execute<{ lsn: string }[]>('select lsn::text as lsn from replica_read_fence where token_id = ?', [
      tokenId,
    ]);
  const replica = tx.getConnection('read');
  const trx = await replica.begin({ readOnly: true });
  try {
    const [row] = await replica.execute<{ caught_up: boolean | null }[]>(
      `select set_config(?, ?, true), set_config('role', ?, true),
         (?::pg_lsn is null or pg_last_wal_replay_lsn() >= ?::pg_lsn) as caught_up`,
      [ENVIRONMENT_SETTING, environmentId, APP_ROLE, fence?.lsn ?? null, fence?.lsn ?? null],
      'all',
      trx,
    );
    if (row?.caught_up) {
      tx.setTransactionContext(trx);
      readTransactionsTotal.labels('replica', fence ? 'own-write-replayed' : 'no-own-write').inc();
      return true;
    }
  } catch (error) {
    await trx
      .rollback()
      .execute()
      .catch(() => {});
    throw error;
  }
  await trx.rollback().execute();
  return false;
}

/**
 * Records, after a write by `tokenId` has committed (or failed), the primary's WAL position: the token's
 * reads go to the primary until a replica has replayed past it. Does nothing without replicas.
 */
export async function fenceReplicaReads(em: EntityManager, tokenId: string): Promise<void> {
  if (!hasReplicas(em)) return;
  await em.getConnection('write').execute(
    `insert into replica_read_fence as fence (token_id, lsn) values (?, pg_current_wal_lsn())
     on conflict (token_id) do update set lsn = excluded.lsn where fence.lsn < excluded.lsn`,
    [tokenId],
    'run',
  );
}

/** The transactions of requests that are one atomic unit (a REST request): see markAtomic. */
const atomicTransactions = new WeakSet<object>();

/**
 * Declares the transaction `em` works in (one `inEnvironment` opened) atomic: any failure inside it
 * fails the whole request, which then rolls back, and nothing goes on after a failed statement. Work
 * directly in it then needs no savepoint of its own (see inAtomicTransaction). A REST request is such a
 * unit; a GraphQL request is not (each mutation field commits or fails on its own).
 */
export function markAtomic(em: EntityManager): void {
  const trx = em.getTransactionContext();
  if (trx) atomicTransactions.add(trx);
}

/** True when `em` works directly in a transaction marked atomic (not in a savepoint inside it). */
export function inAtomicTransaction(em: EntityManager): boolean {
  const trx = em.getTransactionContext();
  return trx !== undefined && atomicTransactions.has(trx);
}

/** The transactions of billing runs' batches: see markBatch. */
const batchTransactions = new WeakSet<object>();

/**
 * Declares the transaction `em` works in a billing run's batch: atomic (markAtomic: any failure rolls
 * the whole batch back, and the run bills it again without the customer that failed), and its invoice
 * changes (invoiceTransaction) need no savepoint either: they run on a fresh identity map in the same
 * transaction (batchFork) and are not merged back into `em`, whose unit of work then holds only the
 * batch's own rows.
 */
export function markBatch(em: EntityManager): void {
  const trx = em.getTransactionContext();
  if (!trx) return;
  atomicTransactions.add(trx);
  batchTransactions.add(trx);
}

/** True when `em` works directly in a billing batch's transaction (markBatch). */
export function inBatchTransaction(em: EntityManager): boolean {
  const trx = em.getTransactionContext();
  return trx !== undefined && batchTransactions.has(trx);
}

/**
 * A fresh identity map on `em`'s batch transaction (markBatch): what the savepoint of a nested
 * `transactional({ clear: true })` gives, without the savepoint, its release and the merge back.
 */
export function batchFork(em: EntityManager): EntityManager {
  return em.fork({ clear: true, keepTransactionContext: true });
}

/**
 * Runs `work`, which only adds or changes entities (it reads nothing a fresh identity map would read
 * otherwise), and flushes what it did in one go: in its own nested transaction (a savepoint) as a rule,
 * but directly on `em`, without a savepoint, in an atomic request's transaction, where a failure fails
 * the whole request anyway.
 */
export async function writeTogether<T>(
  em: EntityManager,
  work: (em: EntityManager) => Promise<T>,
): Promise<T> {
  if (!inAtomicTransaction(em)) return em.transactional((tx) => work(tx as EntityManager), { clear: true });
  const result = await work(em);
  await em.flush();
  return result;
}

/** Makes the transaction `inEnvironment` opened with `em` roll back when its work returns. */
export function markRollbackOnly(em: EntityManager): void {
  rollbackOnly.add(em);
}

/**
 * Runs one deleting statement in every environment, each in its own confined transaction (tenant rows
 * are reachable only from inside their environment); returns how many rows went.
 */
export async function deleteInEveryEnvironment(
  em: EntityManager,
  sql: string,
  params: unknown[],
): Promise<number> {
  const environments = await em.execute<{ id: string }[]>('select id from environment order by id');
  let deleted = 0;
  for (const { id } of environments) {
    const result = await inEnvironment(em, id, (tx) =>
      tx.execute<{ affectedRows: number }>(sql, params, 'run'),
    );
    deleted += result.affectedRows;
  }
  return deleted;
}
