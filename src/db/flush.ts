import { ForeignKeyConstraintViolationException, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DomainError } from '../errors.ts';

/** What a violated constraint means to the caller; a violation without an entry stays unexpected. */
export type ConstraintErrors = { unique?: () => DomainError; foreignKey?: () => DomainError };

/**
 * Flushes the unit of work. The database is the last word on uniqueness and references (two
 * requests can both pass a check made before the write), so a violated constraint becomes the
 * domain error the caller names for it. The failed changes are dropped from the EntityManager.
 */
export async function flushOrFail(em: EntityManager, errors: ConstraintErrors): Promise<void> {
  try {
    await em.flush();
  } catch (error) {
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
