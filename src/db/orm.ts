import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { migrations } from '../../migrations/index.ts';
import { AuditSubscriber } from '../modules/audit/audit.subscriber.ts';
import { entities } from './entities.ts';
import { PreparingClient } from './prepared.ts';

export type Orm = MikroORM;

export function ormOptions(clientUrl: string, options: { poolMax?: number } = {}): Options {
  return {
    clientUrl,
    entities,
    subscribers: [new AuditSubscriber()],
    extensions: [Migrator],
    discovery: { checkDuplicateTableNames: true },
    pool: { min: 0, max: options.poolMax ?? 10 },
    driverOptions: { Client: PreparingClient },
    dataloader: true,
    forceUtcTimezone: true,
    allowGlobalContext: false,
    migrations: {
      migrationsList: migrations,
      snapshot: false,
      silent: true,
      transactional: true,
      allOrNothing: true,
    },
  };
}

export async function openOrm(clientUrl: string, options: { poolMax?: number } = {}): Promise<Orm> {
  return MikroORM.init(ormOptions(clientUrl, options));
}

/** Applies pending migrations; returns the names of those applied. */
export async function migrate(orm: Orm): Promise<string[]> {
  const applied = await orm.migrator.up();
  return applied.map((migration) => migration.name);
}
