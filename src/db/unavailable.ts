import { DriverException } from '@mikro-orm/core';
import type pg from 'pg';
import { PreparingClient } from './prepared.ts';

/** Errors the database client raised while connecting or querying. */
const raisedByDatabase = new WeakSet<object>();

function markRaised<T>(error: T): T {
  if (typeof error === 'object' && error !== null) raisedByDatabase.add(error);
  return error;
}

/**
 * The pool's client class (MikroORM `driverOptions.Client`): a PreparingClient that marks every error
 * it raises connecting or querying, so that a failure is known to come from the database's connection
 * and not from anything else a request holds (its own socket fails with the same codes).
 */
export class DatabaseClient extends PreparingClient {}

DatabaseClient.prototype.connect = function connect(this: pg.Client, callback?: (error?: Error) => void) {
  const connect = PreparingClient.prototype.connect;
  // pg-pool connects with a callback.
  if (callback) return Reflect.apply(connect, this, [(error?: Error) => callback(markRaised(error))]);
  return Reflect.apply(connect, this, []).catch((error: unknown) => Promise.reject(markRaised(error)));
} as typeof pg.Client.prototype.connect;

DatabaseClient.prototype.query = function query(this: pg.Client, ...args: unknown[]) {
  const result = Reflect.apply(PreparingClient.prototype.query, this, args);
  // Kysely (under MikroORM) queries without a callback: a failure is the returned promise's.
  return result instanceof Promise ? result.catch((error) => Promise.reject(markRaised(error))) : result;
} as typeof pg.Client.prototype.query;

/**
 * Node's codes for a connection refused, reset, timed out or broken, and PostgreSQL's for a server
 * shutting down (57P01), starting up (57P03) or a connection failure (08006).
 */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01',
  '57P03',
  '08006',
]);

/**
 * True for errors that mean "the database cannot be reached right now", not "the request is wrong".
 * Only what the database's connection raised counts (marked by DatabaseClient, or re-raised by MikroORM
 * as a DriverException): a client aborting its request body fails the request with ECONNRESET too.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const fromDatabase =
    error instanceof DriverException ||
    (typeof error === 'object' && error !== null && raisedByDatabase.has(error));
  if (!fromDatabase) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  // pg reports a connection lost under it without a code: "Connection terminated unexpectedly" for
  // the query running, "... is not queryable" for the next one on that client.
  return (
    (typeof code === 'string' && CONNECTION_CODES.has(code)) ||
    /Connection terminated|not queryable/i.test(String(message))
  );
}
