import type { EntityManager } from '@mikro-orm/postgresql';

/** What the lock functions answer when another holds a lock they do not wait for. */
export const LOCK_TAKEN = Symbol('billing run lock taken');

/** One billing run at a time per environment. */
const runLock = (environmentId: string) => `billing-run:${environmentId}`;
/** Held shared by each process helping run `runId`, exclusively by the run's lead while it waits for them. */
const helpersLock = (runId: string) => `billing-run-helpers:${runId}`;

type AdvisoryLocks = { names: string[]; shared?: boolean; wait?: boolean };

/**
 * Runs `work` while holding the transaction-scoped advisory locks `names` (shared or exclusive, waiting
 * for them or answering LOCK_TAKEN at once). A billing run commits batch by batch, so its locks must
 * outlive those transactions: they are held by a transaction of its own, on a connection of its own,
 * left open (idle, writing nothing) while the work goes on and ended when it ends. Transaction-scoped,
 * not session locks: a pooler in transaction mode (PgBouncer) keeps the server connection for this
 * client until the transaction ends, and it ends with the locks whatever happens, where a session lock
 * would stay with a server connection the pooler hands to others. A connection on which ending the
 * transaction fails is closed instead of going back to the pool (closing also rolls back, as when the
 * process dies). When the caller's work is one transaction already (a request: billingRunCreate), that
 * transaction takes the locks and holds them until it ends.
 */
async function withAdvisoryLocks<T>(
  em: EntityManager,
  { names, shared = false, wait = false }: AdvisoryLocks,
  work: () => Promise<T>,
): Promise<T | typeof LOCK_TAKEN> {
  const lock = `pg${wait ? '' : '_try'}_advisory_xact_lock${shared ? '_shared' : ''}(hashtextextended($1, 0))`;
  // The waiting functions return void: they answer once the lock is held.
  const take = wait ? `select true as acquired from ${lock}` : `select ${lock} as acquired`;
  if (em.isInTransaction()) {
    for (const name of names) {
      const [row] = await em.execute<{ acquired: boolean }[]>(take.replace('$1', '?'), [name]);
      if (!row?.acquired) return LOCK_TAKEN;
    }
    return work();
  }
  const pool = await em.getConnection().getNativeClient();
  const holder = await pool.connect();
  let open = false;
  try {
    await holder.query('begin');
    open = true;
    for (const name of names) {
      const { rows } = await holder.query<{ acquired: boolean }>(take, [name]);
      if (rows[0]?.acquired !== true) return LOCK_TAKEN;
    }
    return await work();
  } finally {
    if (open)
      open = await holder.query('rollback').then(
        () => false,
        () => true,
      );
    holder.release(open);
  }
}

/**
 * Runs `work` while holding the environment's billing-run lock, so that one billing run at a time acts
 * on an environment, whichever server process starts it. Nothing waits for the lock: when another run
 * holds it, the answer is LOCK_TAKEN at once.
 */
export function withBillingRunLock<T>(
  em: EntityManager,
  environmentId: string,
  work: () => Promise<T>,
): Promise<T | typeof LOCK_TAKEN> {
  return withAdvisoryLocks(em, { names: [runLock(environmentId)] }, work);
}

/**
 * Runs `work` as one of the helpers of run `runId`, holding the run's helpers' lock shared for as long as
 * it bills. LOCK_TAKEN when the run's lead holds it or waits for it: the run is ending, and a helper
 * arriving then has nothing to do.
 */
export function asRunHelper<T>(
  em: EntityManager,
  runId: string,
  work: () => Promise<T>,
): Promise<T | typeof LOCK_TAKEN> {
  return withAdvisoryLocks(em, { names: [helpersLock(runId)], shared: true }, work);
}

/**
 * Runs `work` once no helper of the runs `runIds` is billing (waiting for those that are), and keeps
 * any other from starting until it is done: what `work` writes about the runs (their end) then
 * counts everything their helpers did.
 */
export async function withoutRunHelpers<T>(
  em: EntityManager,
  runIds: string[],
  work: () => Promise<T>,
): Promise<T> {
  if (runIds.length === 0) return work();
  const result = await withAdvisoryLocks(em, { names: runIds.map(helpersLock), wait: true }, work);
  if (result === LOCK_TAKEN) throw new Error('a waiting advisory lock answered as taken');
  return result;
}
