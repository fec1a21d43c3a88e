import type { EntityName } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import { DomainError } from '../errors.ts';
import { findManaged, type JsonShape, type LeanFilter, leanFind, leanSelect, tableOf } from './lean.ts';

type TenantRow = { id: string; environmentId: string };

/**
 * Loads rows of `entity` by id in one query per tick, as read-only plain rows (see leanFind); an id of
 * another environment loads as null. A service that changes a row reads it managed (findManaged).
 */
export function leanById<T extends TenantRow>(
  em: EntityManager,
  environmentId: string,
  entity: EntityName<T>,
): DataLoader<string, Readonly<T> | null> {
  return new DataLoader(async (ids) => {
    const rows = await leanFind(em, entity, { environmentId, id: ids } as LeanFilter<T>);
    const byKey = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byKey.get(id) ?? null);
  });
}

/**
 * Loads rows of `entity` by id as leanById does, each with only the properties of `shape` (a narrowed
 * JsonShape: `jsonShape(em, entity).only(properties)`), in one statement per tick that builds only those
 * columns: for a GraphQL field whose selection says what it reads (src/graphql/columns.ts). Its rows
 * belong to that selection: they never prime another loader, where a field could find a row without
 * the columns it reads.
 */
export function leanByIdAs<T extends TenantRow>(
  em: EntityManager,
  environmentId: string,
  entity: EntityName<T>,
  shape: JsonShape<T>,
): DataLoader<string, Readonly<T> | null> {
  const select = `${shape.object(tableOf(em, entity))} as "row"`;
  return new DataLoader(async (ids) => {
    const rows = await leanSelect(
      em,
      entity,
      { environmentId, id: ids } as LeanFilter<T>,
      { select },
      (row) => shape.revive(row.row as unknown[]),
    );
    const byKey = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byKey.get(id) ?? null);
  });
}

/** Loads the rows of `entity` whose `parent` property is each key, in id order, in one query per tick. */
export function leanByParent<T extends TenantRow, K extends keyof T & string>(
  em: EntityManager,
  environmentId: string,
  entity: EntityName<T>,
  parent: K,
): DataLoader<string, Readonly<T>[]> {
  return new DataLoader(async (keys) => {
    const rows = await leanFind(em, entity, { environmentId, [parent]: keys } as LeanFilter<T>, {
      orderBy: 'id',
    });
    const groups = new Map<string, Readonly<T>[]>(keys.map((key) => [key, []]));
    for (const row of rows) groups.get(row[parent] as string)?.push(row);
    return keys.map((key) => groups.get(key) ?? []);
  });
}

/**
 * The row `loader` loads for `id`, or NOT_FOUND naming it `what` ("Customer 0190… does not exist"): a
 * missing id and one of another environment answer alike.
 */
export async function loadOrNotFound<T>(
  loader: DataLoader<string, T | null>,
  what: string,
  id: string,
): Promise<T> {
  const row = await loader.load(id);
  if (!row) throw DomainError.notFound(what, id);
  return row;
}

/**
 * The row `id` of `environmentId` as a managed entity, for a change to be flushed (loaders give
 * read-only rows), or NOT_FOUND naming it `what`.
 */
export async function managedOrNotFound<T extends TenantRow>(
  em: EntityManager,
  entity: EntityName<T>,
  environmentId: string,
  id: string,
  what: string,
): Promise<T> {
  const [row] = await findManaged(em, entity, { id, environmentId } as LeanFilter<T>);
  if (!row) throw DomainError.notFound(what, id);
  return row;
}
