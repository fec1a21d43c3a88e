import type { EntitySchema } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { runMigrations as runJobQueueMigrations, Logger as WorkerLogger } from 'graphile-worker';
import pg from 'pg';
import { migrations } from '../../migrations/index.ts';
import { AuditSubscriber } from '../audit/audit.subscriber.ts';
import { DatabaseClient } from './unavailable.ts';

export type Orm = MikroORM;

/**
 * The role the application acts as. It owns nothing and cannot bypass row-level security, so every
 * tenant row it reads or writes passes the policies; the migrations create it (see
 * Migration20261121009000TenantIsolation).
 */
export const APP_ROLE = 'billing_app';

export type OrmOptions = {
  /** The tables to map: the module registry's `entities` (src/modules/registry.ts). */
  entities: readonly EntitySchema[];
  poolMax?: number;
  /**
   * Act as the connecting user itself (the tables' owner) instead of switching to APP_ROLE: for
   * migrations and administration (environments, tokens), never for serving requests.
   */
  owner?: boolean;
  /**
   * Streaming replicas of `clientUrl` (DATABASE_REPLICA_URLS). Only read transactions that ask for one go
   * there (inEnvironment with `read`); everything else, reads outside a transaction included, stays on
   * the primary.
   */
  replicaUrls?: readonly string[];
};

export function ormOptions(clientUrl: string, options: OrmOptions): Options {
  return {
    clientUrl,
    entities: [...options.entities],
    subscribers: [new AuditSubscriber()],
    extensions: [Migrator],
    discovery: { checkDuplicateTableNames: true },
    pool: { min: 0, max: options.poolMax ?? 10 },
    replicas: (options.replicaUrls ?? []).map((url, i) => ({ name: `replica-${i + 1}`, clientUrl: url })),
    // MikroORM would otherwise send every read outside a transaction to a replica (the token lookup, a
    // job's reads), where a row committed a moment ago may not have arrived yet.
    preferReadReplicas: false,
    dataloader: true,
    forceUtcTimezone: true,
    allowGlobalContext: false,
    // pg-pool runs onConnect on every new connection before handing it out, and closes one whose role
    // switch fails: nothing ever runs as the owner by mistake, and a failure does not leak a pool slot.
    // DatabaseClient sends the statements marked `prepared` as named prepared statements, and marks the
    // errors it raises as the database's (see isDatabaseUnavailable).
    driverOptions: options.owner
      ? { Client: DatabaseClient }
      : {
          Client: DatabaseClient,
          onConnect: async (client: pg.ClientBase) => {
            await client.query(`set role ${pg.escapeIdentifier(APP_ROLE)}`);
          },
        },
    migrations: {
      migrationsList: migrations,
      snapshot: false,
      silent: true,
      transactional: true,
      allOrNothing: true,
    },
  };
}

/** The ORM the application serves requests with (as APP_ROLE), or with `owner`, the one migrations need. */
export async function openOrm(clientUrl: string, options: OrmOptions): Promise<Orm> {
  return MikroORM.init(ormOptions(clientUrl, options));
}

/**
 * Applies pending migrations; returns the names of those applied. `orm` must be opened with `owner`.
 * The job queue's schema (graphile_worker, versioned by graphile-worker itself) comes first: the
 * application's migrations add jobs to it from triggers and functions, so it must exist whether or
 * not a worker has ever run.
 */
export async function migrate(orm: Orm): Promise<string[]> {
  await runJobQueueMigrations({
    connectionString: orm.config.get('clientUrl'),
    logger: new WorkerLogger(() => () => {}),
  });
  const applied = await orm.migrator.up();
  return applied.map((migration) => migration.name);
}

/**
 * Checks that the application's connections act as APP_ROLE, and that the role is subject to
 * row-level security; otherwise throws an error saying what the operator must do.
 */
export async function assertAppRole(orm: Orm): Promise<void> {
  let row: { role: string; superuser: boolean; bypass: boolean } | undefined;
  try {
    [row] = await orm.em.getConnection().execute<{ role: string; superuser: boolean; bypass: boolean }[]>(
      `select current_user as role, rolsuper as superuser, rolbypassrls as bypass
       from pg_roles where rolname = current_user`,
    );
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === '42704') {
      throw new Error(
        `The database role ${APP_ROLE} does not exist: run the migrations (npm run cli -- migrate) as the database owner.`,
        { cause: error },
      );
    }
    if (code === '42501') {
      throw new Error(
        `The DATABASE_URL user may not switch to the role ${APP_ROLE}: grant it (grant ${APP_ROLE} to <that user>) or run the migrations, which do.`,
        { cause: error },
      );
    }
    throw error;
  }
  if (row?.role !== APP_ROLE || row.superuser || row.bypass) {
    throw new Error(
      `The role ${APP_ROLE} must be NOSUPERUSER and NOBYPASSRLS (alter role ${APP_ROLE} nosuperuser nobypassrls).`,
    );
  }
}
