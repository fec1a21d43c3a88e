import type { EntityName, FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { validate as isUuid } from 'uuid';
import { DomainError } from '../errors.ts';
import { type LeanFilter, leanFind } from './lean.ts';

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

export type PageArgs = { first?: number | null; after?: string | null };

export type Connection<T> = {
  edges: { cursor: string; node: T }[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
};

const encodeCursor = (id: string): string => Buffer.from(id).toString('base64url');

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString();
  if (!isUuid(id)) throw DomainError.onField('INVALID_INPUT', ['after'], 'is not a cursor from this API');
  return id;
}

/**
 * One page of `entity` in id order. Ids are UUIDv7, so id order is creation order and the cursor
 * is simply the last id seen (keyset pagination: no offsets, stable under inserts).
 */
export async function keysetPage<T extends { id: string }>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<T>,
  args: PageArgs,
): Promise<Connection<T>> {
  const { first, afterId } = pageBounds(args);
  const filter = (afterId ? { $and: [where, { id: { $gt: afterId } }] } : where) as FilterQuery<T>;
  const rows = await em.find(entity, filter, { orderBy: { id: 'asc' } as never, limit: first + 1 });
  return connection(rows, first, afterId);
}

/** `keysetPage` for lists that are only read: plain frozen rows (see leanFind), a fraction of the CPU. */
export async function leanKeysetPage<T extends { id: string }>(
  em: EntityManager,
  entity: EntityName<T>,
  where: LeanFilter<T>,
  args: PageArgs,
): Promise<Connection<T>> {
  const { first, afterId } = pageBounds(args);
  const filter = afterId ? { ...where, id: { $gt: afterId } } : where;
  const rows = await leanFind(em, entity, filter as LeanFilter<T>, { orderBy: 'id', limit: first + 1 });
  return connection(rows, first, afterId);
}

function pageBounds(args: PageArgs): { first: number; afterId: string | undefined } {
  const first = args.first ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE_SIZE) {
    throw DomainError.onField('INVALID_INPUT', ['first'], `must be an integer from 1 to ${MAX_PAGE_SIZE}`);
  }
  return { first, afterId: args.after ? decodeCursor(args.after) : undefined };
}

function connection<T extends { id: string }>(
  rows: T[],
  first: number,
  afterId: string | undefined,
): Connection<T> {
  const page = rows.slice(0, first);
  const edges = page.map((node) => ({ cursor: encodeCursor(node.id), node }));
  return {
    edges,
    pageInfo: {
      hasNextPage: rows.length > first,
      hasPreviousPage: afterId !== undefined,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}
