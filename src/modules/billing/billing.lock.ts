import type { EntityManager } from '@mikro-orm/postgresql';

/** What `withBillingRunLock` answers when another run of the environment holds the lock. */
export const LOCK_TAKEN = Symbol('billing run lock taken');

const lockName = (environmentId: string) => `billing-run:${environmentId}`;

/**
 * Runs `work` while holding the environment's billing-run advisory lock, so that one billing run at a
 * time acts on an environment, whichever server process starts it. Nothing waits for the lock: when
 * another run holds it, the answer is LOCK_TAKEN at once.
 *
 * A run commits customer by customer, so the lock has to outlive those transactions: it is a session
 * lock, on a connection of its own. It is released explicitly when the run ends; a connection on which
 * that fails is closed instead of going back to the pool, since closing the session releases the lock
 * too (as it does when the process dies). The session lock needs no table rights, so the pool's
 * connections, which act as the application role, take it as they are. When the caller runs the whole
 * billing run inside a transaction of its own (a request: billingRunCreate), that transaction decides
 * when the run's writes become visible, and the lock is held until it ends.
 */
export async function withBillingRunLock<T>(
  em: EntityManager,
  environmentId: string,
  work: () => Promise<T>,
): Promise<T | typeof LOCK_TAKEN> {
  const name = lockName(environmentId);
  if (em.isInTransaction()) {
    const [row] = await em.execute<{ acquired: boolean }[]>(
      'select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as acquired',
      [name],
    );
    return row?.acquired ? work() : LOCK_TAKEN;
  }
  const pool = await em.getConnection().getNativeClient();
  const session = await pool.connect();
  let held = false;
  try {
    const { rows } = await session.query<{ acquired: boolean }>(
      'select pg_try_advisory_lock(hashtextextended($1, 0)) as acquired',
      [name],
    );
    held = rows[0]?.acquired === true;
    return held ? await work() : LOCK_TAKEN;
  } finally {
    if (held) {
      held = await session.query('select pg_advisory_unlock(hashtextextended($1, 0))', [name]).then(
        () => false,
        () => true,
      );
    }
    session.release(held);
  }
}
