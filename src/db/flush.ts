import { ForeignKeyConstraintViolationException, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DomainError } from '../errors.ts';
import { inAtomicTransaction } from './tenant-transaction.ts';

/** What a violated constraint means to the caller; a violation without an entry stays unexpected. */
export type ConstraintErrors = { unique?: () => DomainError; foreignKey?: () => DomainError };

/**
 * Flushes the unit of work. The database is the last word on uniqueness and references (two
 * requests can both pass a check made before the write), so a violated constraint becomes the
 * domain error the caller names for it. The failed changes are dropped from the EntityManager.
 * Inside a transaction (every request has one) the flush runs in a savepoint, so a violation undoes
 * only this flush and the transaction stays usable for the rest of the request; except directly in an
 * atomic request's transaction (a REST request: markAtomic), which the error fails and rolls back as a
 * whole, so there is nothing to keep usable (two statements fewer a write).
 */
export async function flushOrFail(em: EntityManager, errors: ConstraintErrors): Promise<void> {
  const savepoint = em.isInTransaction() && !inAtomicTransaction(em);
  try {
    if (savepoint) await em.execute('savepoint flush_or_fail', [], 'run');
    await em.flush();
    if (savepoint) await em.execute('release savepoint flush_or_fail', [], 'run');
  } catch (error) {
    // When even the rollback fails (the connection is gone), the original error is the one to report.
    if (savepoint)
      await em.execute('rollback to savepoint flush_or_fail', [], 'run').catch(() => Promise.reject(error));
    const mapped =
      error instanceof UniqueConstraintViolationException
        ? errors.unique?.()
        : error instanceof ForeignKeyConstraintViolationException
          ? errors.foreignKey?.()
          : undefined;
    if (!mapped) throw error;
    em.clear();
    throw mapped;
  }
}
