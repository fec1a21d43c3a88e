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
  const savepoint = needsSavepoint(em);
  try {
    if (savepoint) await em.execute('savepoint flush_or_fail', [], 'run');
    await em.flush();
    if (savepoint) await em.execute('release savepoint flush_or_fail', [], 'run');
  } catch (error) {
    // When even the rollback fails (the connection is gone), the original error is the one to report.
    if (savepoint)
      await em.execute('rollback to savepoint flush_or_fail', [], 'run').catch(() => Promise.reject(error));
    const mapped = constraintError(error, errors);
    if (!mapped) throw error;
    em.clear();
    throw mapped;
  }
}

/**
 * Whether a write on `em` must take a savepoint to fail alone: inside a transaction that is not an
 * atomic request's (see flushOrFail).
 */
export function needsSavepoint(em: EntityManager): boolean {
  return em.isInTransaction() && !inAtomicTransaction(em);
}

/** SQLSTATEs of the violations ConstraintErrors names, for errors that come from pg as they are. */
const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';

/** Whether the error is a violated unique constraint, converted by MikroORM (a flush) or as pg raised it. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof UniqueConstraintViolationException || code === UNIQUE_VIOLATION;
}

/**
 * The domain error `errors` names for a violated constraint, whether MikroORM converted the database's
 * error (a flush) or it comes as pg raised it (a lean write); undefined for any other error.
 */
export function constraintError(error: unknown, errors: ConstraintErrors): DomainError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (isUniqueViolation(error)) return errors.unique?.();
  if (error instanceof ForeignKeyConstraintViolationException || code === FOREIGN_KEY_VIOLATION) {
    return errors.foreignKey?.();
  }
  return undefined;
}
