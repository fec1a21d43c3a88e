import type { EntityMetadata, EntityName } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { CompiledQuery } from 'kysely';
import { PinnedTransaction } from './pinned-transaction.ts';
import { prepared } from './prepared.ts';

type Converter = { name: string; convert: (value: unknown) => unknown };
type Shape = { meta: EntityMetadata; columns: string; table: string; converters: Converter[] };

const shapes = new WeakMap<object, Shape>();

function shapeOf(em: EntityManager, entity: EntityName<object>): Shape {
  const known = shapes.get(entity as object);
  if (known) return known;
  const meta = em.getMetadata().get(entity);
  const platform = em.getPlatform();
  const scalars = meta.props.filter((prop) => prop.fieldNames?.length === 1 && prop.persist !== false);
  const shape: Shape = {
    meta,
    table: platform.quoteIdentifier(meta.tableName),
    columns: scalars.map((prop) => platform.quoteIdentifier(prop.fieldNames[0] as string)).join(', '),
    converters: scalars.flatMap((prop) => {
      const type = prop.customType;
      return type
        ? [
            {
              name: prop.name,
              convert: (value) => type.convertToJSValue(value, platform, { mode: 'serialization' }),
            },
          ]
        : [];
    }),
  };
  shapes.set(entity as object, shape);
  return shape;
}

const COMPARISONS = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

type Comparison<V> = { [K in keyof typeof COMPARISONS]?: V };

/** Per property: equal to a value, one of a list, null, or within comparisons ({ $gte: a, $lte: b }). */
export type LeanFilter<T> = { [K in keyof T]?: T[K] | readonly T[K][] | Comparison<T[K]> | null };

type FindOptions<T> = {
  orderBy?: keyof T & string;
  descending?: boolean;
  limit?: number;
  /** The select list, in place of every column of the entity (see leanSelect). */
  select?: string;
  /** The values of the select list's `?` placeholders, in their order. */
  selectParams?: readonly unknown[];
  /**
   * The statement sent around the select, given its text: e.g. `with "page" as (<select>) select ... from
   * "page" left join ...`, to read what goes with a page's rows once for the page instead of once per row.
   */
  around?: (select: string) => string;
};

/**
 * One statement in the two forms it can be sent: with $n placeholders (a prepared statement) and with
 * ? placeholders (for em.execute, which writes the values into the text).
 */
type Statement = { prepared: string; inline: string; params: unknown[] };

function statement<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  where: LeanFilter<T>,
  options: FindOptions<T>,
): Statement | null {
  const { meta, table, columns: every } = shapeOf(em, entity as EntityName<object>);
  const columns = options.select ?? every;
  const platform = em.getPlatform();
  const column = (name: string) => {
    const field = meta.properties[name as never]?.fieldNames?.[0];
    if (!field) throw new Error(`${meta.className} has no column for ${name}`);
    return platform.quoteIdentifier(field);
  };
  const prepared: string[] = [];
  const inline: string[] = [];
  // The select list's values come first, as its placeholders do in the text.
  const params: unknown[] = [...(options.selectParams ?? [])];
  let placeholder = 0;
  const preparedColumns = columns.replace(/\?/g, () => `$${++placeholder}`);
  const condition = (name: string, sign: string, value: unknown) => {
    params.push(value);
    prepared.push(`${column(name)} ${sign} $${params.length}`);
    inline.push(`${column(name)} ${sign} ?`);
  };
  for (const [name, value] of Object.entries(where)) {
    if (value === undefined) continue;
    if (value === null) {
      prepared.push(`${column(name)} is null`);
      inline.push(`${column(name)} is null`);
    } else if (Array.isArray(value) && value.length === 1) {
      // A list of one (a loader's usual batch) as plain equality: PostgreSQL runs it in half the time.
      condition(name, '=', value[0]);
    } else if (Array.isArray(value)) {
      if (value.length === 0) return null;
      params.push(value);
      prepared.push(`${column(name)} = any($${params.length})`);
      inline.push(`${column(name)} in (?)`);
    } else if (typeof value === 'object' && !(value instanceof Date)) {
      for (const [operator, bound] of Object.entries(value)) {
        const sign = COMPARISONS[operator as keyof typeof COMPARISONS];
        if (!sign) throw new Error(`leanFind does not know ${operator}`);
        if (bound !== undefined) condition(name, sign, bound);
      }
    } else {
      condition(name, '=', value);
    }
  }
  const head = `select ${preparedColumns} from ${table}`;
  const inlineHead = `select ${columns} from ${table}`;
  const order = options.orderBy
    ? ` order by ${column(options.orderBy)}${options.descending ? ' desc' : ''}`
    : '';
  const clause = (parts: string[]) => (parts.length > 0 ? ` where ${parts.join(' and ')}` : '');
  const around = options.around ?? ((select: string) => select);
  if (options.limit === undefined) {
    return {
      prepared: around(head + clause(prepared) + order),
      inline: around(inlineHead + clause(inline) + order),
      params,
    };
  }
  params.push(Math.trunc(options.limit));
  return {
    prepared: around(`${head}${clause(prepared)}${order} limit $${params.length}`),
    inline: around(`${inlineHead}${clause(inline)}${order} limit ?`),
    params,
  };
}

/**
 * The rows of `entity` matching `where`, as the database returns them (column names). A prepared
 * statement on the EntityManager's Kysely (its transaction when it has one); em.execute where the
 * EntityManager must first wrap the statement in a transaction of its own for its session context
 * (row-level security variables), which only it knows how to do.
 */
async function selectRows<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  where: LeanFilter<T>,
  options: FindOptions<T>,
): Promise<Record<string, unknown>[]> {
  const query = statement(em, entity, where, options);
  if (!query) return [];
  if (em.getSessionContext() && !em.isInTransaction()) {
    return em.execute<Record<string, unknown>[]>(query.inline, query.params);
  }
  return runStatement(em, prepared(query.prepared), query.params);
}

/**
 * Sends one statement with $n placeholders in the EntityManager's transaction (straight on its client
 * in an environment's transaction, PinnedTransaction; otherwise through its Kysely), logged as MikroORM
 * logs its own: the statement path of the lean reads and writes. A text marked `prepared` goes out as a
 * named prepared statement.
 */
export async function runStatement(
  em: EntityManager,
  text: string,
  params: unknown[],
): Promise<Record<string, unknown>[]> {
  const started = performance.now();
  const trx = em.getTransactionContext();
  const rows =
    trx instanceof PinnedTransaction
      ? await trx.rows(text, params)
      : (await em.getKysely().executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, params))).rows;
  logStatement(em, text, params, started, rows.length);
  return rows;
}

/** Logs a statement sent past MikroORM as MikroORM logs its own. */
export function logStatement(
  em: EntityManager,
  query: string,
  params: unknown[],
  started: number,
  results: number,
): void {
  em.config.getLogger().logQuery({
    ...em.getLoggerContext(),
    query,
    params,
    took: Math.round(performance.now() - started),
    results,
    level: 'info',
  });
}

/**
 * Rows of `entity` that match `where` (every condition), as frozen plain objects with the entity's
 * property names and JavaScript values: what `em.find` gives, without entity instances, identity map
 * or change tracking. A MikroORM find spends several times the CPU of its query building and hydrating
 * entities; read-only hot paths (the per-request loaders, lists, the token check) read through this
 * instead. The statement runs on `em`, so it joins the request's transaction and session like any
 * other query.
 */
export async function leanFind<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  where: LeanFilter<T>,
  options: FindOptions<T> = {},
): Promise<Readonly<T>[]> {
  return (await selectRows(em, entity, where, options)).map(leanRowOf(em, entity));
}

/**
 * What leanFind makes of a row of `entity` as the database returns it (column names): the frozen
 * plain object with property names and JavaScript values. For a leanSelect that reads the entity's
 * columns (columnsOf) with something else beside them.
 */
export function leanRowOf<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
): (row: Record<string, unknown>) => Readonly<T> {
  const { meta, converters } = shapeOf(em, entity as EntityName<object>);
  const comparator = em.getComparator();
  return (row) => {
    const data = comparator.mapResult(meta, row) as Record<string, unknown>;
    for (const { name, convert } of converters) {
      if (data[name] != null) data[name] = convert(data[name]);
    }
    return Object.freeze(data) as Readonly<T>;
  };
}

/** The select list of every column of `entity` that leanFind reads (for leanRowOf). */
export function columnsOf<T extends object>(em: EntityManager, entity: EntityName<T>): string {
  return shapeOf(em, entity as EntityName<object>).columns;
}

/**
 * The same statement, its rows merged into `em` as managed entities (`em.map`) for a change to be
 * flushed: what `em.find` does for a plain filter, without its query building. A row already managed
 * by `em` is refreshed from the database, so call it before changing anything.
 */
export async function findManaged<T extends object>(
  em: EntityManager,
  entity: EntityName<T>,
  where: LeanFilter<T>,
  options: FindOptions<T> = {},
): Promise<T[]> {
  return (await selectRows(em, entity, where, options)).map((row) => em.map(entity, row as never));
}

/**
 * Rows of `entity` matching `where`, with a select list of the caller's (`options.select`, which may
 * name the table to correlate subqueries with it) instead of the entity's columns, each row passed
 * through `map`. The same statement path as leanFind (prepared, in the request's transaction): for a
 * read that builds its answer in SQL, e.g. an entity with its children as JSON (see JsonShape).
 */
export async function leanSelect<T extends object, R>(
  em: EntityManager,
  entity: EntityName<T>,
  where: LeanFilter<T>,
  options: FindOptions<T> & { select: string },
  map: (row: Record<string, unknown>) => R,
): Promise<R[]> {
  return (await selectRows(em, entity, where, options)).map(map);
}

/** The quoted table name of `entity`, to correlate a subquery with the outer row of a leanSelect. */
export function tableOf<T extends object>(em: EntityManager, entity: EntityName<T>): string {
  return shapeOf(em, entity as EntityName<object>).table;
}

/**
 * An entity's row as JSON built by PostgreSQL, read back as exactly what leanFind gives (property
 * names, the same JavaScript values, frozen): PostgreSQL sends one JSON text that JSON.parse reads at
 * once instead of a column at a time through pg's parsers, and a row's children can come with it in
 * one statement (json_agg in a correlated subquery). The row travels as an array of its values in
 * property order, not an object: the names would be most of the text.
 */
export type JsonShape<T> = {
  /** `json_build_array(...)` of the row `alias` (a table name or alias, quoted). */
  object: (alias: string) => string;
  /** A parsed JSON array of `object` as leanFind's row. */
  revive: (values: unknown[]) => Readonly<T>;
  /**
   * The same shape with only `properties` (and `id` and `environmentId`, which every row keeps), for a
   * read that knows what its rows will be asked for (a GraphQL selection, see src/graphql/columns.ts):
   * the row then has those properties only. All of them when `properties` is null or names one the
   * entity has no column for.
   */
  only: (properties: ReadonlySet<string> | null) => JsonShape<T>;
};

/** Properties every narrowed row keeps: its identity and its tenant. */
const ALWAYS = ['id', 'environmentId'];
/** Narrowed shapes kept per entity (one per distinct selection): beyond it, the oldest is dropped. */
const NARROWED_SHAPES = 64;

const jsonShapes = new WeakMap<object, JsonShape<never>>();

/**
 * The JSON shape of `entity`: JSON columns as they are, numerics and bigints as the text or number
 * leanFind's converters give, timestamps as ISO text revived as Date. Throws for a property type it does
 * not know, so a new column type fails its first use, not an answer.
 */
export function jsonShape<T extends object>(em: EntityManager, entity: EntityName<T>): JsonShape<T> {
  const known = jsonShapes.get(entity as object);
  if (known) return known as JsonShape<T>;
  const { meta, converters } = shapeOf(em, entity as EntityName<object>);
  const platform = em.getPlatform();
  const converted = new Set(converters.map((converter) => converter.name));
  const props = meta.props.filter((prop) => prop.fieldNames?.length === 1 && prop.persist !== false);
  const columnType = (prop: (typeof props)[number]) => String(prop.columnTypes?.[0] ?? '').toLowerCase();
  const parts = props.map((prop): ((alias: string) => string) => {
    const name = platform.quoteIdentifier(prop.fieldNames[0] as string);
    const column = columnType(prop);
    // With a time zone: milliseconds since the epoch, truncated as pg's parser truncates microseconds
    // (a number JSON.parse reads and Date takes as it is, where parsing ISO text costs).
    if (column.startsWith('timestamptz') || column.includes('with time zone')) {
      return (alias) => `floor(extract(epoch from ${alias}.${name}) * 1000)`;
    }
    if (column.startsWith('timestamp')) return (alias) => `${alias}.${name}`;
    if (column.startsWith('numeric') || column.startsWith('decimal')) {
      if (prop.runtimeType !== 'number') return (alias) => `${alias}.${name}::text`;
      return (alias) => `${alias}.${name}`;
    }
    if ((column === 'bigint' || column === 'int8') && prop.runtimeType !== 'number') {
      throw new Error(`jsonShape: ${meta.className}.${prop.name} is not a number`);
    }
    if (
      converted.has(prop.name) &&
      !['json', 'jsonb', 'date', 'bigint', 'int8'].includes(column) &&
      !column.startsWith('uuid')
    ) {
      throw new Error(
        `jsonShape: ${meta.className}.${prop.name} (${column}) has a conversion it does not know`,
      );
    }
    return (alias) => `${alias}.${name}`;
  });
  const names = props.map((prop) => prop.name);
  const dates = props.map((prop) => columnType(prop).startsWith('timestamp'));
  const build = (indexes: readonly number[]): JsonShape<T> => {
    // One object literal of the entity's properties, compiled once per entity (and per narrowed
    // selection): every row then has the same hidden class, built without a keyed store per property.
    // The names are the entity's own.
    const literal = indexes.map((index, position) => {
      const value = `values[${position}]`;
      return `${JSON.stringify(names[index])}: ${dates[index] ? `${value} == null ? ${value} : new Date(${value})` : value}`;
    });
    const construct = new Function('values', `return { ${literal.join(', ')} };`) as (
      values: unknown[],
    ) => Record<string, unknown>;
    const selected = indexes.map((index) => parts[index] as (alias: string) => string);
    // A shape is asked for its text with a handful of aliases, once per request or page: built once each.
    const objects = new Map<string, string>();
    return {
      object: (alias) => {
        let text = objects.get(alias);
        if (text === undefined) {
          text = `json_build_array(${selected.map((part) => part(alias)).join(', ')})`;
          objects.set(alias, text);
        }
        return text;
      },
      revive: (values) => Object.freeze(construct(values)) as Readonly<T>,
      only,
    };
  };
  const narrowed = new Map<string, JsonShape<T>>();
  const position = new Map(names.map((name, index) => [name, index]));
  const only = (properties: ReadonlySet<string> | null): JsonShape<T> => {
    if (properties === null) return shape;
    const wanted = new Set(ALWAYS.filter((name) => position.has(name)));
    for (const name of properties) {
      if (!position.has(name)) return shape;
      wanted.add(name);
    }
    if (wanted.size === names.length) return shape;
    const indexes = [...wanted].map((name) => position.get(name) as number).sort((a, b) => a - b);
    const key = indexes.join(',');
    const known = narrowed.get(key);
    if (known) {
      narrowed.delete(key);
      narrowed.set(key, known);
      return known;
    }
    const made = build(indexes);
    narrowed.set(key, made);
    if (narrowed.size > NARROWED_SHAPES) narrowed.delete(narrowed.keys().next().value as string);
    return made;
  };
  const shape = build(names.map((_, index) => index));
  jsonShapes.set(entity as object, shape as JsonShape<never>);
  return shape;
}
