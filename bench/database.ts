/** The bench scripts' database: started, migrated and seeded, and settled between measurements. */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type EmbeddedDatabase, startEmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate, openOrm } from '../src/db/orm.ts';
import { entities } from '../src/modules/registry.ts';
import { drainJobQueue } from './load.ts';
import { type SeededData, seed } from './seed.ts';

/**
 * An embedded PostgreSQL in a directory of its own (`billing-<name>-…` under the system's temporary
 * one), migrated and seeded (bench/seed.ts) by the owner; `remove` stops it and deletes the directory.
 */
export async function seededDatabase(
  name: string,
): Promise<{ dataDir: string; database: EmbeddedDatabase; data: SeededData; remove: () => Promise<void> }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `billing-${name}-`));
  // Run as root, PostgreSQL runs as its own user and must be able to enter the directory.
  await chmod(dataDir, 0o755);
  const database = await startEmbeddedDatabase(dataDir);
  const remove = async () => {
    await database.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const owner = await openOrm(database.url, { entities, poolMax: 4, owner: true });
    await migrate(owner);
    const data = await seed(owner);
    await owner.close();
    return { dataDir, database, data, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

/**
 * Lets the database catch up before a measurement: the writes of the previous one leave autovacuum,
 * analyze and checkpoint work that would otherwise land in whichever measurement comes next.
 */
export async function settle(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('vacuum (analyze)');
    await client.query('checkpoint');
  } finally {
    await client.end();
  }
}

/**
 * Waits until the server's job worker has worked off what the seed queued (an event fan-out per seeded
 * invoice): left queued, that backlog is worked off during the first measurement, which then prices it.
 * Jobs due later (retries, the schedule's next run) are not waited for.
 */
export async function drainJobs(databaseUrl: string, timeoutMs = 120_000): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await drainJobQueue(client, timeoutMs);
  } finally {
    await client.end();
  }
}
