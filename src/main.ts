import { createServer } from 'node:http';
import { createApp, GRAPHQL_PATH } from './app.ts';
import { AccessService } from './auth/access.service.ts';
import { TokenCache } from './auth/token-cache.ts';
import { ConfigError, loadConfig } from './config.ts';
import { openDatabase } from './db/database.ts';
import { assertAppRole, migrate, type Orm, openOrm } from './db/orm.ts';
import { loadTrustedDocuments } from './graphql/trusted-documents.ts';
import { startWorker, workerConnections } from './jobs/worker.ts';
import { createLogger } from './logger.ts';
import { endEventFeeds } from './modules/event/event.feed.ts';
import { entities } from './modules/registry.ts';

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}

const logger = createLogger(config.LOG_LEVEL);
const database = await openDatabase(config, logger);
const baseUrl = `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${config.PORT}`;

// Migrations and the first start's environment and token need the database owner; requests never do.
// Migrating holds a lock across transactions: a session, so DATABASE_SESSION_URL.
const owner = await openOrm(database.sessionUrl, {
  entities,
  poolMax: 1,
  owner: true,
  preparedStatements: config.DB_PREPARED_STATEMENTS,
});
if (config.MIGRATE_ON_START) {
  try {
    const applied = await migrate(owner);
    if (applied.length > 0) logger.info({ migrations: applied }, 'applied migrations');
  } catch (error) {
    await abortStart((error as Error).message, owner);
  }
}

const orm = await openOrm(database.url, {
  entities,
  // Requests give their connections back; the job worker's billing runs hold some while they wait.
  poolMax: config.JOB_WORKER
    ? Math.max(config.DB_POOL_MAX, workerConnections(config) + 1)
    : config.DB_POOL_MAX,
  replicaUrls: config.DATABASE_REPLICA_URLS,
  preparedStatements: config.DB_PREPARED_STATEMENTS,
  sessionUrl: database.sessionUrl,
});
try {
  await assertAppRole(orm);
} catch (error) {
  await abortStart((error as Error).message, owner, orm);
}
// A dedicated listening session, not one of the pool's: see TokenCache.
const tokenCache =
  config.TOKEN_CACHE_SECONDS > 0
    ? new TokenCache(orm.config.get('clientUrl') as string, config.TOKEN_CACHE_SECONDS * 1000, logger)
    : undefined;
try {
  await tokenCache?.start();
} catch (error) {
  await abortStart(`Cannot listen for token revocations: ${(error as Error).message}`, owner, orm);
}
const rateLimit =
  config.RATE_LIMIT_REQUESTS > 0
    ? { maxRequests: config.RATE_LIMIT_REQUESTS, windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS }
    : undefined;
const costBudget =
  config.QUERY_COST_PER_SECOND > 0
    ? { costPerSecond: config.QUERY_COST_PER_SECOND, burst: config.QUERY_COST_BURST }
    : undefined;
// Filled once the port is ours: GraphiQL reads it per request.
const graphiqlHeaders: Record<string, string> = {};
const authFailureLimit =
  config.AUTH_FAILURE_LIMIT_REQUESTS > 0
    ? {
        maxRequests: config.AUTH_FAILURE_LIMIT_REQUESTS,
        windowSeconds: config.AUTH_FAILURE_LIMIT_WINDOW_SECONDS,
      }
    : undefined;
const server = createServer(
  createApp({
    orm,
    logger,
    graphiqlHeaders,
    rateLimit,
    tokenCache,
    costBudget,
    metricsToken: config.METRICS_TOKEN,
    corsOrigins: config.CORS_ORIGINS,
    trustedDocuments: config.GRAPHQL_TRUSTED_DOCUMENTS
      ? loadTrustedDocuments(config.GRAPHQL_TRUSTED_DOCUMENTS)
      : undefined,
    authFailureLimit,
    executionLimits: { timeoutMs: config.EXECUTION_TIMEOUT_MS, maxResponseBytes: config.MAX_RESPONSE_BYTES },
    maxCostInFlight: config.GRAPHQL_INFLIGHT_COST,
    allowPrivateWebhookTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
  }),
);
try {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
} catch (error) {
  const { code, message } = error as NodeJS.ErrnoException;
  await abortStart(
    code === 'EADDRINUSE'
      ? `Cannot listen on ${baseUrl}: port ${config.PORT} on ${config.HOST} is already in use. Stop what holds it or set PORT.`
      : `Cannot listen on ${baseUrl}: ${message}`,
    owner,
    orm,
  );
}
// The first start's token is created only once the server listens: a start that fails creates none, so the
// next one still prints it.
try {
  Object.assign(graphiqlHeaders, await developmentHeaders(owner));
} finally {
  await owner.close();
}
let worker: Awaited<ReturnType<typeof startWorker>> | undefined;
if (config.JOB_WORKER) {
  try {
    worker = await startWorker(config, { orm, ownerUrl: database.sessionUrl, logger });
    worker.promise.catch((error) => logger.error({ err: error }, 'the job worker failed'));
  } catch (error) {
    server.close();
    await abortStart(`Cannot start the job worker: ${(error as Error).message}`, orm);
  }
}
const metrics = config.METRICS_TOKEN
  ? `${baseUrl}/metrics with METRICS_TOKEN`
  : 'off until METRICS_TOKEN is set';
const jobs = worker ? `jobs: ${config.JOB_CONCURRENCY} at once` : 'jobs: off (JOB_WORKER=false)';
logger.info(`listening on ${baseUrl} (GraphiQL: ${baseUrl}${GRAPHQL_PATH}; metrics: ${metrics}; ${jobs})`);

/**
 * A start that cannot go on says why and exits non-zero, after closing the pools and stopping the embedded
 * PostgreSQL: left running, it would hold the data directory for nobody.
 */
async function abortStart(message: string, ...pools: Orm[]): Promise<never> {
  console.error(message);
  for (const pool of pools) await pool.close();
  await database.stop();
  process.exit(1);
}

/**
 * On the embedded database, the first start creates a "Development" environment and a token and
 * prints them once; later starts only prefill the environment in GraphiQL.
 */
async function developmentHeaders(owner: Orm): Promise<Record<string, string>> {
  if (!database.embedded) return {};
  const access = new AccessService(owner.em.fork());
  const [existing] = await access.listEnvironments();
  if (existing) {
    return { 'x-environment': existing.id, authorization: 'Bearer <the token printed on the first start>' };
  }
  const environment = await access.createEnvironment('Development');
  const { secret } = await access.createToken([environment.id], 'Development (first start)');
  const headers = { 'x-environment': environment.id, authorization: `Bearer ${secret}` };
  const link = `${baseUrl}${GRAPHQL_PATH}?headers=${encodeURIComponent(JSON.stringify(headers))}`;
  process.stdout.write(
    [
      '',
      'First start: created the "Development" environment and an API token.',
      `  environment: ${environment.id}`,
      `  token:       ${secret}   (shown only now; store it)`,
      `  GraphiQL:    ${link}`,
      '',
      `  curl ${baseUrl}${GRAPHQL_PATH} -H 'authorization: Bearer ${secret}' \\`,
      `    -H 'x-environment: ${environment.id}' -H 'content-type: application/json' \\`,
      `    -d '{"query":"{ customers { edges { node { id name } } } }"}'`,
      '',
    ].join('\n'),
  );
  return headers;
}

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down: finishing in-flight requests');
  const force = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_TIMEOUT_MS);
  await endEventFeeds();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
  clearTimeout(force);
  await worker?.stop().catch((error) => logger.warn({ err: error }, 'the job worker stopped with an error'));
  await tokenCache?.close();
  await orm.close();
  await database.stop();
  logger.info('stopped');
  process.exit(0);
}

process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
