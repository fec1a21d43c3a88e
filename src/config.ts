import { parseCronItems } from 'graphile-worker';
import { z } from 'zod';

export type ExecutionLimits = { timeoutMs: number; maxResponseBytes: number };

/**
 * What a query may cost: one unit per field of each object it can return, a list's sub-selection
 * counted once per element it can hold (src/limits/query-cost.ts prices it). It admits a full page of
 * 100 invoices, each with its 1,000 lines (every line field) and its settlements; fifteen such pages
 * under aliases cost far more.
 */
export const MAX_QUERY_COST = 2_500_000;

/**
 * The default of GRAPHQL_INFLIGHT_COST, the total query cost of the GraphQL operations executing at
 * once (src/limits/cost-gate.ts): two pages of 50 invoices with their lines side by side (priced at
 * 1,000 lines each, about 416,000), but one at a time of the documents costing more than 420,000, such
 * as the heaviest one the limits admit (3 × 18 invoices of 1,000 lines, about 449,000): one of those
 * alone takes the process some 60-90 MiB above its ordinary RSS while it runs.
 */
export const DEFAULT_INFLIGHT_COST = 840_000;

/** The defaults of the per-request limits on execution time and response size. */
export const EXECUTION_LIMITS: ExecutionLimits = { timeoutMs: 10_000, maxResponseBytes: 10 * 1024 * 1024 };

const booleanFlag = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1');

/** An origin as browsers send it: scheme, host and port only, in canonical form (no path, no slash). */
const origin = z.string().refine(
  (value) => {
    try {
      const url = new URL(value);
      // A wildcard parses as a host name, yet no browser sends one: the list holds exact origins only.
      return (
        (url.protocol === 'https:' || url.protocol === 'http:') &&
        url.origin === value &&
        !value.includes('*')
      );
    } catch {
      return false;
    }
  },
  { error: (issue) => `${JSON.stringify(issue.input)} is not an origin such as https://app.example.com` },
);

function isCronSchedule(value: string): boolean {
  try {
    parseCronItems([{ task: 'check', match: value }]);
    return value.split(/\s+/).length === 5;
  } catch {
    return false;
  }
}

/** A crontab schedule of five fields, or `off`. */
const cronSchedule = z
  .string()
  .trim()
  .refine((value) => value === 'off' || isCronSchedule(value), {
    error: 'must be a crontab schedule of five fields, such as "0 * * * *", or "off"',
  });

const ConfigSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default('localhost'),
  DATABASE_URL: z
    .url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// or postgresql:// URL' })
    .optional(),
  /**
   * Comma-separated postgres:// URLs of streaming replicas of DATABASE_URL; unset: none. Plain reads (REST
   * GETs, GraphQL queries) go to one of them in a read-only transaction, unless the token's own last write
   * has not been replayed there yet (docs/scaling.md).
   */
  DATABASE_REPLICA_URLS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    )
    .pipe(
      z.array(
        z.url({ protocol: /^postgres(ql)?$/, error: 'each must be a postgres:// or postgresql:// URL' }),
      ),
    ),
  /**
   * Where the connections that need a server session of their own go (the job worker, which LISTENs
   * and keeps session state; the live event feed's LISTEN; migrations, which hold a lock across
   * transactions): the database directly or a pooler in session mode. Unset: DATABASE_URL. Set it when
   * DATABASE_URL goes through a pooler in transaction mode (PgBouncer `pool_mode = transaction`).
   */
  DATABASE_SESSION_URL: z
    .url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// or postgresql:// URL' })
    .optional(),
  /**
   * Whether the hot reads go out as named prepared statements (planned once per connection); `false`
   * behind a pooler in transaction mode that does not track them (PgBouncer before 1.21, or with
   * max_prepared_statements = 0).
   */
  DB_PREPARED_STATEMENTS: booleanFlag.default(true),
  DATA_DIR: z.string().min(1).default('.data'),
  MIGRATE_ON_START: booleanFlag.default(true),
  DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  /** Unset: /metrics is not served. Set: it is, to this bearer token only. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /**
   * Seconds an authenticated API token is kept in memory (0: read per request). Revocation reaches every
   * process at once by notification on a dedicated listening connection; see docs/performance.md.
   */
  TOKEN_CACHE_SECONDS: z.coerce.number().int().min(0).max(300).default(10),
  RATE_LIMIT_REQUESTS: z.coerce.number().int().min(0).default(1000),
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** A JSON manifest (hash → document) of the only GraphQL operations /graphql runs; any when unset. */
  GRAPHQL_TRUSTED_DOCUMENTS: z.string().min(1).optional(),
  /** Comma-separated origins whose browser pages may call the API (CORS); none when unset. */
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    )
    .pipe(z.array(origin)),
  /** Requests failing authentication one client address may send per window (0: unlimited). */
  AUTH_FAILURE_LIMIT_REQUESTS: z.coerce.number().int().min(0).default(100),
  AUTH_FAILURE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** How long one request may execute before it is answered TIMEOUT and rolled back. */
  EXECUTION_TIMEOUT_MS: z.coerce.number().int().min(1).default(EXECUTION_LIMITS.timeoutMs),
  /** The largest GraphQL response sent; a larger one is answered RESPONSE_TOO_LARGE. */
  MAX_RESPONSE_BYTES: z.coerce.number().int().min(1024).default(EXECUTION_LIMITS.maxResponseBytes),
  /**
   * The total query cost of the GraphQL operations executing at once in this process: a costlier
   * operation waits for its turn (SERVER_BUSY, 503, when its deadline passes first); one costing at
   * most 10,000 never waits. It bounds the memory heavy queries take together.
   */
  GRAPHQL_INFLIGHT_COST: z.coerce.number().int().min(1).default(DEFAULT_INFLIGHT_COST),
  /**
   * Query cost units one API token earns per second (0: no budget). Operations costing more than
   * FREE_QUERY_COST spend them; a token that has spent its burst waits (429) until it has earned the
   * operation's cost again. The default admits one of the largest queries every two and a half seconds.
   */
  QUERY_COST_PER_SECOND: z.coerce.number().int().min(0).default(1_000_000),
  /** The most a token may have saved up, at least the largest query's cost (MAX_QUERY_COST). */
  QUERY_COST_BURST: z.coerce
    .number()
    .int()
    .min(MAX_QUERY_COST, `must be at least ${MAX_QUERY_COST}, the cost of the largest query admitted`)
    .default(2 * MAX_QUERY_COST),
  /**
   * When the server's billing runs start, as a crontab (minute hour day month weekday, UTC); `off`: none
   * (runs only through billingRunCreate). A run also starts when a worker starts.
   */
  BILLING_RUN_SCHEDULE: cronSchedule.default('0 * * * *'),
  /**
   * Batches of customers a server's billing run bills at once, each in its own transaction on its own
   * connection: pricing one batch in the process overlaps with PostgreSQL writing another. One by
   * default: two were slower on two shared cores (bench/PROFILE.md, "Round 6: concurrent batches").
   */
  BILLING_CONCURRENCY: z.coerce.number().int().min(1).max(8).default(1),
  /**
   * Helpers a scheduled billing run asks for: that many `billing-run-help` jobs, which the workers of
   * any process (this one's included) take to bill the run's customers beside it, so that a run is split
   * over the processes. None by default: on one process a helper is only another batch at once.
   */
  BILLING_HELPERS: z.coerce.number().int().min(0).max(16).default(0),
  /** Whether `npm start` runs the job worker too; `npm run worker` runs one alone. */
  JOB_WORKER: booleanFlag.default(true),
  /** Days events are kept (GraphQL `events`); older ones are purged daily. */
  EVENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /**
   * The SMTP server invoice e-mail goes through, as `smtp://user:password@host:587` (STARTTLS when the
   * server offers it) or `smtps://…:465`; unset: the server sends no e-mail.
   */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\/[^\s]+$/, 'must be an smtp:// or smtps:// URL')
    .optional(),
  /** The From address of invoice e-mail (the name is each environment's). */
  MAIL_FROM: z.email().default('billing@localhost.localdomain'),
  /**
   * Whether webhook endpoints may point at loopback, private, link-local and other non-public addresses
   * (refused by default: a URL is checked when an endpoint is saved and again, after a fresh DNS lookup,
   * at every delivery).
   */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: booleanFlag.default(false),
  /** How long one webhook delivery attempt may take, connecting and reading the answer included. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** The wait before a failed delivery's first retry; each next wait is three times longer, at most 12 hours. */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(1).max(3_600_000).default(10_000),
  /**
   * Hours a delivery is retried before it counts as failed; an endpoint that has failed every attempt for
   * as long is disabled.
   */
  WEBHOOK_RETRY_HOURS: z.coerce.number().positive().max(720).default(72),
  /** Jobs one worker runs at once. */
  JOB_CONCURRENCY: z.coerce.number().int().min(1).max(50).default(2),
});

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {}

/** Reads the configuration once from environment variables; a bad variable is named in the message. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const known = Object.fromEntries(
    Object.keys(ConfigSchema.shape).map((key) => [key, env[key] === '' ? undefined : env[key]]),
  );
  const result = ConfigSchema.safeParse(known);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${problems.join('\n')}`);
  }
  return result.data;
}
