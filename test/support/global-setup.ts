import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { dropDatabase, ensureDatabase, withDatabase } from '../../src/db/admin.ts';
import { startEmbeddedDatabase } from '../../src/db/embedded.ts';
import { migrate, openOrm } from '../../src/db/orm.ts';
import { entities } from '../../src/modules/registry.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the server's maintenance database, for creating per-file databases. */
    adminUrl: string;
    /** A migrated database every test file clones its own database from. */
    templateDatabase: string;
  }
}

/**
 * Starts one PostgreSQL for the whole run (embedded, or the server in DATABASE_URL) and migrates a
 * template database once; each test file then clones its own database from it in milliseconds.
 */
export default async function setup(project: TestProject) {
  let adminUrl: string;
  let stop = async () => {};
  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
  } else {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'billing-test-'));
    // Run as root, PostgreSQL runs as its own user and must be able to enter the directory.
    await chmod(dataDir, 0o755);
    const embedded = await startEmbeddedDatabase(dataDir);
    adminUrl = embedded.url.replace(/\/billing$/, '/postgres');
    stop = async () => {
      await embedded.stop();
      await rm(dataDir, { recursive: true, force: true });
    };
  }

  const templateDatabase = `billing_template_${process.pid}`;
  const templateUrl = withDatabase(adminUrl, templateDatabase);
  await ensureDatabase(adminUrl, templateDatabase);
  const orm = await openOrm(templateUrl, { entities, poolMax: 1, owner: true });
  await migrate(orm);
  await orm.close();

  project.provide('adminUrl', adminUrl);
  project.provide('templateDatabase', templateDatabase);

  return async () => {
    await dropDatabase(adminUrl, templateDatabase);
    await stop();
  };
}
