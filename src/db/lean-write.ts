import { type EntityMetadata, type EntityName, type EntityProperty, helper } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type ConstraintErrors, constraintError, needsSavepoint } from './flush.ts';
import { runStatement } from './lean.ts';
import { prepared } from './prepared.ts';

/**
 * Writing rows without MikroORM's unit of work: the statements of a change built from the entities'
 * metadata and sent together as one statement (data-modifying CTEs), on the request's transaction. The
 * audit and event rows of a change go with it: modules write through `writeChange`
 * (src/modules/event/event.service.ts), never through these alone.
 */

type Column = { prop: EntityProperty; name: string; json: boolean };
type Table = { meta: EntityMetadata; table: string; columns: Column[] };

const tables = new WeakMap<object, Table>();

function tableOf(em: EntityManager, entity: EntityName<object>): Table {
  const known = tables.get(entity as object);
  if (known) return known;
  const meta = em.getMetadata().get(entity);
  const platform = em.getPlatform();
  const table: Table = {
    meta,
    table: platform.quoteIdentifier(meta.tableName),
    columns: meta.props
      .filter((prop) => prop.fieldNames?.length === 1 && prop.persist !== false)
      .map((prop) => ({
        prop,
        name: platform.quoteIdentifier(prop.fieldNames[0] as string),
        json: ['json', 'jsonb'].includes(String(prop.columnTypes?.[0]).toLowerCase()),
      })),
  };
  tables.set(entity as object, table);
  return table;
}

/** The column of property `name` of the table. */
function columnNamed({ meta, columns }: Table, name: string): Column {
  const found = columns.find((column) => column.prop.name === name);
  if (!found) throw new Error(`${meta.className} has no column for ${name}`);
  return found;
}

/** A value as its column takes it as a parameter: JSON as its text (pg would send an array as a SQL array). */
const parameter = (column: Column, value: unknown): unknown =>
  column.json && value != null ? JSON.stringify(value) : value;

/**
 * A new row of `entity` as `em.create` makes it: `data`, with what the entity makes on creation (its id,
 * `createdAt`) and its declared defaults for the properties `data` leaves out, null for the rest. A plain
 * object, not an entity: nothing tracks it.
 */
export function newRow<T extends object>(em: EntityManager, entity: EntityName<T>, data: Partial<T>): T {
  const row: Record<string, unknown> = { ...data };
  for (const { prop } of tableOf(em, entity as EntityName<object>).columns) {
    if (row[prop.name] !== undefined) continue;
    if (prop.onCreate) row[prop.name] = prop.onCreate(row as never, em);
    else row[prop.name] = prop.default ?? null;
  }
  return row as T;
}

/** One part of a change: a statement with $n placeholders numbered from `params`' length on. */
export type WritePart = (params: unknown[]) => string;

/** Inserts `rows` (made by newRow) in one statement: every column of the entity, a row per VALUES list. */
export function insertRows<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  rows: readonly T[],
): WritePart {
  const { table, columns } = tableOf(em, entity as EntityName<object>);
  return (params) => {
    const values = rows.map((row) => {
      const placeholders = columns.map((column) => {
        params.push(parameter(column, (row as Record<string, unknown>)[column.prop.name] ?? null));
        return `$${params.length}`;
      });
      return `(${placeholders.join(', ')})`;
    });
    return `insert into ${table} (${columns.map((column) => column.name).join(', ')}) values ${values.join(', ')}`;
  };
}

/**
 * Sets, on each of `rows` (tenant rows), the properties `names` to the row's own values, in one statement
 * (`update … from (values …)`): many rows changed alike (a billing batch's items) in one update instead
 * of an update each, which PostgreSQL would plan one by one within the statement.
 */
export function updateRows<T extends { id: string; environmentId: string }>(
  em: EntityManager,
  entity: EntityName<T>,
  names: readonly string[],
  rows: readonly { key: Pick<T, 'id' | 'environmentId'>; set: Partial<T> }[],
): WritePart {
  const known = tableOf(em, entity as EntityName<object>);
  const { table } = known;
  const column = (name: string) => columnNamed(known, name);
  const all = ['id', 'environmentId', ...names].map(column);
  const [id, environment, ...set] = all as [Column, Column, ...Column[]];
  return (params) => {
    const values = rows.map(({ key, set: row }, index) => {
      const record = { ...row, id: key.id, environmentId: key.environmentId } as Record<string, unknown>;
      const placeholders = all.map((each) => {
        params.push(parameter(each, record[each.prop.name] ?? null));
        // The first row's casts type the values' columns (parameters alone would be text).
        return index === 0 ? `$${params.length}::${each.prop.columnTypes?.[0]}` : `$${params.length}`;
      });
      return `(${placeholders.join(', ')})`;
    });
    const named = all.map((each) => each.name);
    const assignments = set.map((each) => `${each.name} = v.${each.name}`);
    return `update ${table} set ${assignments.join(', ')} from (values ${values.join(', ')}) as v (${named.join(', ')}) where ${table}.${id.name} = v.${id.name} and ${table}.${environment.name} = v.${environment.name}`;
  };
}

/** Sets the properties of `set` on the row `id` of `environmentId` (tenant rows only). */
export function updateRow<T extends { id: string; environmentId: string }>(
  em: EntityManager,
  entity: EntityName<T>,
  key: Pick<T, 'id' | 'environmentId'>,
  set: Partial<T>,
): WritePart {
  const known = tableOf(em, entity as EntityName<object>);
  const { table } = known;
  const column = (name: string) => columnNamed(known, name);
  return (params) => {
    const assignments = Object.entries(set).map(([name, value]) => {
      params.push(parameter(column(name), value ?? null));
      return `${column(name).name} = $${params.length}`;
    });
    params.push(key.id, key.environmentId);
    const id = column('id').name;
    const environment = column('environmentId').name;
    return `update ${table} set ${assignments.join(', ')} where ${id} = $${params.length - 1} and ${environment} = $${params.length}`;
  };
}

/**
 * What the unit of work would flush for `entity`, a managed entity changed in memory: each changed
 * property with its new value (MikroORM's own comparison, so the same properties its flush would set and
 * its audit event would name), the `set` of a lean update (writeChange). The entity then counts as
 * written: the unit of work's flush leaves it alone, so the caller must write the answer in the same
 * transaction. Empty when nothing changed.
 */
export function takeChanges<T extends object>(em: EntityManager, entity: T): Partial<T> {
  const wrapped = helper(entity);
  const comparator = em.getComparator();
  const now = comparator.prepareEntity(entity);
  const diff = comparator.diffEntities(wrapped.__meta.class, wrapped.__originalEntityData ?? {}, now);
  wrapped.__originalEntityData = now;
  const set: Record<string, unknown> = {};
  for (const name of Object.keys(diff)) set[name] = (entity as Record<string, unknown>)[name];
  return set as Partial<T>;
}

/** Statements of up to this many parts and parameters go out prepared: a bounded set of shapes. */
const PREPARED_MAX_PARAMS = 256;

/**
 * Sends the parts as one statement (each but the last as a data-modifying CTE; PostgreSQL checks the
 * references between them at the statement's end, so a parent and its children go together) in `em`'s
 * transaction (one of its own outside any). As flushOrFail: a violated constraint becomes the domain error `errors` names, and outside
 * an atomic request's transaction the statement runs in a savepoint so that it fails alone.
 */
export async function writeParts(
  em: EntityManager,
  parts: readonly WritePart[],
  errors: ConstraintErrors = {},
): Promise<void> {
  // Outside a transaction (a script's service call), one of its own, as a flush would open.
  if (!em.isInTransaction()) {
    return em.transactional((tx) => writeParts(tx as EntityManager, parts, errors));
  }
  const params: unknown[] = [];
  const texts = parts.map((part) => part(params));
  const last = texts.pop();
  if (last === undefined) return;
  const text =
    texts.length > 0 ? `with ${texts.map((part, i) => `w${i} as (${part})`).join(', ')} ${last}` : last;
  const savepoint = needsSavepoint(em);
  try {
    if (savepoint) await runStatement(em, 'savepoint lean_write', []);
    await runStatement(em, params.length <= PREPARED_MAX_PARAMS ? prepared(text) : text, params);
    if (savepoint) await runStatement(em, 'release savepoint lean_write', []);
  } catch (error) {
    // When even the rollback fails (the connection is gone), the original error is the one to report.
    if (savepoint)
      await runStatement(em, 'rollback to savepoint lean_write', []).catch(() => Promise.reject(error));
    throw constraintError(error, errors) ?? error;
  }
}
