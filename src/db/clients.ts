import pg from 'pg';
import { DatabaseClient } from './unavailable.ts';

/** A BEGIN or START TRANSACTION statement alone (with its modes, without parameters). */
const BEGIN = /^\s*(begin|start\s+transaction)\b[^;]*;?\s*$/i;
/** Statements that end a transaction, which go out as they are whatever the connection's state. */
const TRANSACTION_END = /^\s*(commit|rollback|end|abort)\b/i;

type Send = (...args: unknown[]) => Promise<unknown>;
type Callback = (error: Error | null, result?: unknown) => void;

export type PoolClientOptions = {
  /** Send the texts marked `prepared` as named statements (DB_PREPARED_STATEMENTS). */
  namedStatements: boolean;
  /** The role every statement runs as, set for its transaction only; none: the connecting user. */
  role?: string;
};

/**
 * The pool's client class (MikroORM `driverOptions.Client`) for `options`.
 *
 * With a `role`, nothing a connection does outlives its transaction, so a pooler in transaction mode
 * (PgBouncer) may hand the server connection to anyone after it: every BEGIN goes out together with
 * `set_config('role', <role>, true)` (as `set local role`, in the same round trip), and a statement
 * sent outside a transaction is wrapped in one that does the same (`begin; set_config(…)`, the
 * statement, `commit`). The role is never set for the session, which a pooler would hand, with
 * the role, to the next client of that server connection. The BEGIN itself is answered at once and
 * sent with the statement after it: when that is MikroORM's `set_config` of the transaction's
 * variables, BEGIN, role and variables take one round trip instead of two.
 */
export function poolClient({ namedStatements, role }: PoolClientOptions): typeof DatabaseClient {
  const base = namedStatements
    ? DatabaseClient
    : class UnnamedClient extends DatabaseClient {
        override get namedStatements(): boolean {
          return false;
        }
      };
  if (role === undefined) return base;
  const setRoleCall = `set_config('role', ${pg.escapeLiteral(role)}, true)`;
  const setRole = `select ${setRoleCall}`;

  class RoleClient extends base {
    /** The last statement sent: the next decides on the connection's state once that one is answered. */
    tail: Promise<unknown> = Promise.resolve();
    /** A BEGIN answered but not sent yet: it goes out with the statement after it (see asRole). */
    pendingBegin: string | undefined;
  }

  RoleClient.prototype.query = function query(this: RoleClient, config: unknown, ...rest: unknown[]) {
    const send = base.prototype.query as unknown as Send;
    // A Submittable (cursor, stream) goes out as it is; the application sends none.
    if (typeof (config as { submit?: unknown } | null)?.submit === 'function') {
      // A BEGIN held back for the next statement (see asRole) cannot go out with a cursor: refused, so
      // that nothing ever runs outside the transaction and its role.
      if (this.pendingBegin !== undefined)
        throw new Error('a cursor cannot be the first statement of a transaction');
      return Reflect.apply(send, this, [config, ...rest]);
    }
    const callback = typeof rest.at(-1) === 'function' ? (rest.pop() as Callback) : undefined;
    const args = [config, ...rest];
    const run = this.tail.then(() =>
      asRole(this, (...call) => Reflect.apply(send, this, call), setRole, setRoleCall, args),
    );
    this.tail = run.catch(() => {});
    if (!callback) return run;
    run.then(
      (result) => callback(null, result),
      (error: Error) => callback(error),
    );
    return undefined;
  } as typeof pg.Client.prototype.query;

  return RoleClient;
}

/** What pg answers for a BEGIN (all that Kysely and MikroORM read of it). */
const BEGUN = { command: 'BEGIN', rowCount: null, rows: [], fields: [] };

/**
 * The statement that sets a transaction's variables, as MikroORM sends it right after BEGIN
 * (`select set_config($1, $2, true), …`): with its values written in, it shares BEGIN's round trip.
 */
const SET_CONFIG_WRITTEN =
  /^select set_config\('[^']*', '[^']*', true\)(, set_config\('[^']*', '[^']*', true\))*$/;
const SET_CONFIG = /^select set_config\(\$1, \$2, true\)(, set_config\(\$\d+, \$\d+, true\))*$/;

async function asRole(
  client: pg.Client & { pendingBegin: string | undefined },
  send: Send,
  setRole: string,
  setRoleCall: string,
  args: unknown[],
): Promise<unknown> {
  const [config, values] = args;
  const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
  const begin = client.pendingBegin;
  if (begin !== undefined) {
    client.pendingBegin = undefined;
    const inlined = typeof text === 'string' ? withValuesWritten(text, values) : undefined;
    if (inlined !== undefined) {
      // BEGIN, the role and the transaction's variables in one simple query: one round trip, not two.
      // When the variables set this role already (inEnvironment names it among them), once is enough.
      const statement = setsRole(inlined, setRoleCall)
        ? `${begin}; ${inlined}`
        : `${begin}; ${setRole}; ${inlined}`;
      const results = await send(statement).catch(abandon(client, send));
      return Array.isArray(results) ? results.at(-1) : results;
    }
    await send(`${begin}; ${setRole}`).catch(abandon(client, send));
  }
  const status = client.getTransactionStatus();
  // In a transaction (T) or a failed one (E), the transaction's BEGIN already set the role.
  if (status === 'T' || status === 'E' || typeof text !== 'string' || TRANSACTION_END.test(text)) {
    return send(...args);
  }
  const hasValues = Array.isArray(values) && values.length > 0;
  if (BEGIN.test(text) && !hasValues && typeof config === 'string') {
    // Answered at once and sent with the next statement, which follows at once (the transaction's
    // variables, or its first statement); both then share one round trip with the role.
    client.pendingBegin = text.trim().replace(/;$/, '');
    return BEGUN;
  }
  await send(`begin; ${setRole}`).catch(abandon(client, send));
  try {
    const result = await send(...args);
    await send('commit');
    return result;
  } catch (error) {
    if (client.getTransactionStatus() !== 'I') await send('rollback').catch(() => {});
    throw error;
  }
}

/**
 * True when `inlined` (a `select set_config(…), …` of written-in literals, see withValuesWritten) has
 * `setRoleCall` as one of its calls. A value cannot fake one: written-in literals have their quotes
 * doubled (or none, SET_CONFIG_WRITTEN), so the call's quoted name and value only match a call.
 */
function setsRole(inlined: string, setRoleCall: string): boolean {
  return inlined.startsWith(`select ${setRoleCall}`) || inlined.includes(`, ${setRoleCall}`);
}

/**
 * `text` as a simple query with its values written in, when it is MikroORM's `set_config` of a
 * transaction's variables (with its values written in already, or every value a string); otherwise
 * undefined.
 */
function withValuesWritten(text: string, values: unknown): string | undefined {
  const noValues = values === undefined || (Array.isArray(values) && values.length === 0);
  // MikroORM usually writes the values in itself: one statement without values (no `;` in it) as is.
  if (noValues) return SET_CONFIG_WRITTEN.test(text) && !text.includes(';') ? text : undefined;
  if (!SET_CONFIG.test(text) || !Array.isArray(values)) return undefined;
  if (!values.every((value) => typeof value === 'string')) return undefined;
  const inlined = text.replace(/\$(\d+)/g, (_, n: string) => {
    const value = values[Number(n) - 1];
    return typeof value === 'string' ? pg.escapeLiteral(value) : '$';
  });
  return inlined.includes('$') ? undefined : inlined;
}

/**
 * When the role cannot be set (the user may not act as it), the BEGIN went through and left a failed
 * transaction: it is rolled back before the error goes on, so the connection is usable again.
 */
function abandon(client: pg.Client, send: Send): (error: unknown) => Promise<never> {
  return async (error) => {
    if (client.getTransactionStatus() !== 'I') await send('rollback').catch(() => {});
    throw error;
  };
}
