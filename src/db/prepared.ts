import pg from 'pg';

/** Statement texts to send as named prepared statements, and their names. */
const names = new Map<string, string>();

/**
 * Marks `text` (with $1, $2… placeholders) as a prepared statement: each connection of the pool
 * parses and plans it once, then only binds and executes it. PostgreSQL then spends about half the
 * CPU on a short read. For texts built from a bounded set of shapes only (never from values), since
 * every connection keeps each one for its lifetime.
 */
export function prepared(text: string): string {
  if (!names.has(text)) names.set(text, `prepared_${names.size + 1}`);
  return text;
}

/**
 * The pool's client class (MikroORM `driverOptions.Client`): a text marked with `prepared` goes out
 * as a named statement, everything else exactly as it comes. A subclass whose `namedStatements` is
 * false sends every text unnamed (DB_PREPARED_STATEMENTS=false): a named statement belongs to one
 * server session, which a pooler in transaction mode (PgBouncer before 1.21) does not keep for a client.
 */
export class PreparingClient extends pg.Client {
  get namedStatements(): boolean {
    return true;
  }
}

PreparingClient.prototype.query = function query(this: PreparingClient, config: unknown, ...rest: unknown[]) {
  const send = pg.Client.prototype.query;
  const name = typeof config === 'string' && this.namedStatements ? names.get(config) : undefined;
  const [values, callback] = rest;
  if (name === undefined || !Array.isArray(values)) return Reflect.apply(send, this, [config, ...rest]);
  return Reflect.apply(send, this, [{ name, text: config, values }, callback]);
} as typeof pg.Client.prototype.query;
