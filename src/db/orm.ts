import type { EntitySchema } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { runMigrations as runJobQueueMigrations, Logger as WorkerLogger } from 'graphile-worker';
import pg from 'pg';
import { migrations } from '../../migrations/index.ts';
import { AuditSubscriber } from '../audit/audit.subscriber.ts';
import { poolClient } from './clients.ts';

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
  /**
   * Send the lean reads as named prepared statements (DB_PREPARED_STATEMENTS, default true); false
   * behind a pooler in transaction mode that does not track them (PgBouncer before 1.21).
   */
  preparedStatements?: boolean;
  /**
   * Where what needs a session of its own connects (DATABASE_SESSION_URL): the live event feed's
   * LISTEN. Default: `clientUrl`.
   */
  sessionUrl?: string;
};

const sessionUrls = new Map<string, string>();

/**
 * The URL for connections that must keep one server session (LISTEN): the `sessionUrl` the ORM of
 * `clientUrl` was opened with, or `clientUrl` itself.
 */
export function sessionUrlOf(clientUrl: string): string {
  return sessionUrls.get(clientUrl) ?? clientUrl;
}

export function ormOptions(clientUrl: string, options: OrmOptions): Options {
  if (options.sessionUrl) sessionUrls.set(clientUrl, options.sessionUrl);
  const namedStatements = options.preparedStatements ?? true;
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
    // The client class sends the statements marked `prepared` as named prepared statements (unless
    // `preparedStatements` is false), and marks the errors it raises as the database's (see
    // isDatabaseUnavailable). The application's acts as APP_ROLE in every transaction and only there
    // (`set local role` with each BEGIN, and a statement outside a transaction wrapped in one): nothing
    // ever runs as the owner by mistake, and no server connection keeps the role for a pooler to hand
    // to another client (see poolClient).
    driverOptions: {
      Client: poolClient({ namedStatements, role: options.owner ? undefined : APP_ROLE }),
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

/** The advisory lock concurrent starts (or `cli migrate`s) of one database take in turn to migrate it. */
const MIGRATION_LOCK = 'billing-gateway:migrations';

/**
 * Applies pending migrations; returns the names of those applied. `orm` must be opened with `owner`.
 * The job queue's schema (graphile_worker, versioned by graphile-worker itself) comes first: the
 * application's migrations add jobs to it from triggers and functions, so it must exist whether or
 * not a worker has ever run.
 *
 * Several processes started at once on one database migrate one after the other: each first takes a
 * session advisory lock on a connection of its own (waiting while another holds it), so the first
 * migrates and the others then find nothing left to do. That connection must keep its session:
 * `orm`'s URL goes to the database directly or through session pooling (DATABASE_SESSION_URL), never
 * through a pooler in transaction mode. It closes when the migrations end, which releases the lock even
 * if the unlock did not.
 */
export async function migrate(orm: Orm): Promise<string[]> {
  const connectionString = orm.config.get('clientUrl') as string;
  const lock = new pg.Client({ connectionString });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock(hashtextextended($1, 0))', [MIGRATION_LOCK]);
    await runJobQueueMigrations({ connectionString, logger: new WorkerLogger(() => () => {}) });
    const applied = await orm.migrator.up();
    await lock.query('select pg_advisory_unlock(hashtextextended($1, 0))', [MIGRATION_LOCK]);
    return applied.map((migration) => migration.name);
  } finally {
    await lock.end().catch(() => {});
  }
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
