import {
  type Column,
  type ColumnDifference,
  DatabaseSchema,
  SchemaComparator,
  type SchemaDifference,
  type TableDifference,
} from '@mikro-orm/postgresql';
import { describe, expect, it } from 'vitest';
import type { Orm } from '../../src/db/orm.ts';
import { setupTestApp } from '../support/harness.ts';

const t = setupTestApp();

/**
 * The statements that would bring this file's database (built by the committed migrations) to what
 * the entities declare, restricted to what the entities claim.
 *
 * The entities map every column of their tables, so any column difference counts. Everything else
 * they declare (tables, indexes, uniques, checks, foreign keys, policies, functions) must exist as
 * declared. The migrations own more than the entities model: row-level security with its policies,
 * roles and functions, foreign keys and checks the entities leave out, indexes for queries, column
 * defaults for raw SQL, and the tables only raw SQL touches (Idempotency-Key records, rate-limit
 * counters). What exists only in the database is therefore not drift; what the entities declare and
 * the database lacks, or has otherwise, is.
 */
async function schemaDrift(orm: Orm): Promise<string[]> {
  const generator = orm.schema;
  const connection = orm.em.getConnection();
  const platform = orm.em.getPlatform();
  const declared = generator.getTargetSchema();
  const namespaces = declared.getNamespaces();
  const database = await DatabaseSchema.create(connection, platform, orm.config, undefined, namespaces);
  await database.loadRoutines(connection, platform, namespaces);
  const diff = new SchemaComparator(platform).compare(database, declared);
  const claimed: SchemaDifference = {
    ...diff,
    removedTables: {},
    removedViews: {},
    removedRoutines: {},
    removedNamespaces: new Set(),
    removedNativeEnums: [],
    orphanedForeignKeys: [],
    changedTables: Object.fromEntries(
      Object.entries(diff.changedTables).map(([name, table]) => [name, claimedByEntities(table)]),
    ),
  };
  const sql = generator.diffToSQL(claimed, { wrap: false, safe: false, dropTables: false });
  return sql
    .split(/;\s*\n/)
    .map((statement) => statement.trim())
    .filter(Boolean);
}

function claimedByEntities(table: TableDifference): TableDifference {
  return {
    ...table,
    changedColumns: Object.fromEntries(
      Object.entries(table.changedColumns).filter(([, column]) => !onlyDatabaseDefault(column)),
    ),
    removedIndexes: {},
    removedChecks: {},
    removedForeignKeys: {},
    removedTriggers: {},
    removedPolicies: {},
    changedRlsEnabled: table.changedRlsEnabled || undefined,
    changedRlsForced: table.changedRlsForced || undefined,
  };
}

/** A default only the database has: the entities always write the value, raw SQL may rely on it. */
function onlyDatabaseDefault(column: ColumnDifference): boolean {
  const declared: Column = column.column;
  return (
    column.changedProperties.size === 1 && column.changedProperties.has('default') && declared.default == null
  );
}

describe('schema drift between the entities and the migrations', () => {
  it('finds none in a database built by the committed migrations', async () => {
    // given this file's database, cloned from the template the committed migrations built
    // when it is compared with the entities
    const drift = await schemaDrift(t.adminOrm);

    // then nothing the entities declare is missing or different
    expect(drift).toEqual([]);
  });

  it('lists a column the entities map that the database lacks', async () => {
    // given a database where a column an entity maps is gone
    await t.sql('alter table customer drop column company_name');

    // when it is compared with the entities
    const drift = await schemaDrift(t.adminOrm);

    // then the check names the statement that would add it back, and nothing else
    expect(drift).toEqual(['alter table "customer" add "company_name" varchar(250) null']);
  });
});
