import { ConfigError, loadConfig } from './config.ts';
import { assertAppRole, openOrm } from './db/orm.ts';
import { startWorker, workerConnections } from './jobs/worker.ts';
import { createLogger } from './logger.ts';
import { entities } from './modules/registry.ts';

/**
 * `npm run worker`: the job worker alone, for deployments that keep it apart from the servers (which
 * then run with JOB_WORKER=false). It needs DATABASE_URL: the embedded PostgreSQL belongs to the
 * `npm start` that started it, and the database must be migrated already.
 */
let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
  if (!config.DATABASE_URL)
    throw new ConfigError('npm run worker needs DATABASE_URL: the database the servers use');
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}

const logger = createLogger(config.LOG_LEVEL);
const databaseUrl = config.DATABASE_URL as string;
// The queue LISTENs and keeps session state: its connections go to DATABASE_SESSION_URL.
const sessionUrl = config.DATABASE_SESSION_URL ?? databaseUrl;
const orm = await openOrm(databaseUrl, {
  entities,
  poolMax: workerConnections(config),
  preparedStatements: config.DB_PREPARED_STATEMENTS,
  sessionUrl,
});
let worker: Awaited<ReturnType<typeof startWorker>>;
try {
  await assertAppRole(orm);
  worker = await startWorker(config, { orm, ownerUrl: sessionUrl, logger });
} catch (error) {
  console.error(`Cannot start the job worker: ${(error as Error).message}`);
  await orm.close();
  process.exit(1);
}
logger.info(`job worker running (${config.JOB_CONCURRENCY} at once)`);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down: finishing running jobs');
  await worker.stop().catch((error) => logger.warn({ err: error }, 'the job worker stopped with an error'));
  await orm.close();
  logger.info('stopped');
  process.exit(0);
}

process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
