import type { Pool } from 'pg';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's Prometheus metrics, served at /metrics. Module-level, as prom-client intends: a
 * process serves one app, and code far from HTTP (billing runs) counts into the same registry.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

const registers = [metricsRegistry];

/** `route` is the REST path template, `graphql:<type>:<root field>`, or one of the fixed endpoints. */
export const httpRequestsTotal = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers,
});

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from receiving a request to having its response, by method, route and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers,
});

/** Incremented once per billing run with its outcome: `succeeded` or `failed`. */
export const billingRunsTotal = new Counter({
  name: 'billing_runs_total',
  help: 'Billing runs finished, by outcome',
  labelNames: ['outcome'] as const,
  registers,
});
// Both series exist from the start, so rate() and alerts work before the first run.
billingRunsTotal.labels('succeeded').inc(0);
billingRunsTotal.labels('failed').inc(0);

/**
 * Read transactions (REST GETs, GraphQL queries) by where they ran: `replica` or `primary`, and why
 * (no replica configured, the token's own write not yet replayed on the replica, ...).
 */
export const readTransactionsTotal = new Counter({
  name: 'db_read_transactions_total',
  help: 'Read-only request transactions, by target (replica or primary) and reason',
  labelNames: ['target', 'reason'] as const,
  registers,
});

let poolSource: (() => Promise<Pool>) | undefined;

/** Reports the pool `source` resolves to (the app's database pool) at every scrape. */
export function observeDatabasePool(source: () => Promise<Pool>): void {
  poolSource = source;
}

new Gauge({
  name: 'db_pool_connections',
  help: 'Connections of the database pool, by state: in_use (checked out) or idle',
  labelNames: ['state'] as const,
  registers,
  async collect() {
    const pool = await poolSource?.();
    if (!pool) return;
    this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
    this.set({ state: 'idle' }, pool.idleCount);
  },
});

new Gauge({
  name: 'db_pool_waiting_requests',
  help: 'Queries waiting for a free connection of the database pool',
  registers,
  async collect() {
    const pool = await poolSource?.();
    if (pool) this.set(pool.waitingCount);
  },
});

new Gauge({
  name: 'db_pool_max_connections',
  help: 'Size limit of the database pool',
  registers,
  async collect() {
    const pool = await poolSource?.();
    if (pool?.options.max !== undefined) this.set(pool.options.max);
  },
});
