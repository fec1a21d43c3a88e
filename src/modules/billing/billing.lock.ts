import type { EntityManager } from '@mikro-orm/postgresql';

/** What `withBillingRunLock` answers when another run of the environment holds the lock. */
export const LOCK_TAKEN = Symbol('billing run lock taken');

const lockName = (environmentId: string) => `billing-run:${environmentId}`;

/**
 * Runs `work` while holding the environment's billing-run advisory lock, so that one billing run at a
 * time acts on an environment, whichever server process starts it. Nothing waits for the lock: when
 * another run holds it, the answer is LOCK_TAKEN at once.
 *
 * A run commits customer by customer, so the lock has to outlive those transactions: it is held by a
 * transaction of its own, on a connection of its own, left open (idle, writing nothing) while the run
 * goes on and ended when it ends. A transaction-scoped lock, not a session lock: a pooler in
 * transaction mode (PgBouncer) keeps the server connection for this client until the transaction ends,
 * and it ends with the lock whatever happens, where a session lock would stay with a server connection
 * the pooler hands to others once the statement that took it has committed. A connection on which
 * ending the transaction fails is closed instead of going back to the pool (closing also rolls back,
 * as when the process dies). When the caller runs the whole billing run inside a transaction of its
 * own (a request: billingRunCreate), that transaction takes the lock and holds it until it ends.
 */
export async function withBillingRunLock<T>(
  em: EntityManager,
  environmentId: string,
  work: () => Promise<T>,
): Promise<T | typeof LOCK_TAKEN> {
  const name = lockName(environmentId);
  const take = 'select pg_try_advisory_xact_lock(hashtextextended($1, 0)) as acquired';
  if (em.isInTransaction()) {
    const [row] = await em.execute<{ acquired: boolean }[]>(take.replace('$1', '?'), [name]);
    return row?.acquired ? work() : LOCK_TAKEN;
  }
  const pool = await em.getConnection().getNativeClient();
  const holder = await pool.connect();
  let open = false;
  try {
    await holder.query('begin');
    open = true;
    const { rows } = await holder.query<{ acquired: boolean }>(take, [name]);
    return rows[0]?.acquired === true ? await work() : LOCK_TAKEN;
  } finally {
    if (open)
      open = await holder.query('rollback').then(
        () => false,
        () => true,
      );
    holder.release(open);
  }
}
