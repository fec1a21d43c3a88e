import { TransactionContext } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { APP_ROLE } from './orm.ts';

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
 */
export async function inEnvironment<T>(
  em: EntityManager,
  environmentId: string,
  work: (em: EntityManager) => Promise<T>,
): Promise<T> {
  const tx = em.fork({ clear: true });
  // The role too, so the transaction is confined even on an ORM that connects as the owner. As a
  // variable (set_config('role', …, true) is `set local role`), both go out in one statement.
  tx.setSessionContext({ variables: { [ENVIRONMENT_SETTING]: environmentId, role: APP_ROLE } });
  await tx.begin();
  try {
    // Code that reaches for the global EntityManager inside `work` gets this transaction's.
    const result = await TransactionContext.create(tx, () => work(tx));
    if (rollbackOnly.has(tx)) await tx.rollback();
    else await tx.commit();
    return result;
  } catch (error) {
    // A failed statement or a lost connection already ended the transaction on the server; the
    // rollback only frees the connection, and its own failure must not hide the original error.
    if (tx.isInTransaction()) await tx.rollback().catch(() => {});
    throw error;
  }
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
