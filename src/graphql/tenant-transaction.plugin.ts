import { type ExecutionArgs, type ExecutionResult, type GraphQLError, locatedError } from 'graphql';
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import type { RequestContext } from '../context.ts';
import { afterWrite, inRequestTransaction } from '../context.ts';
import { markRollbackOnly } from '../db/tenant-transaction.ts';
import { type Deadline, requestDeadline, withinDeadline } from '../limits/deadline.ts';
import { type RootField, splitMutation } from './mutation-fields.ts';
import { operationOf } from './operation.ts';

type Context = RequestContext & YogaInitialContext;

type Execute = (args: ExecutionArgs) => Promise<ExecutionResult>;

/**
 * Runs `execute` in the environment's transaction, with a context whose EntityManager is that
 * transaction's; past the request's deadline it is answered TIMEOUT and the transaction rolled back.
 * `options` as inRequestTransaction's.
 */
const inTransaction = (
  execute: Execute,
  args: ExecutionArgs,
  deadline: Deadline,
  options: { readOnly?: boolean; only?: boolean } = {},
) =>
  inRequestTransaction(
    args.contextValue as Context,
    (tx) =>
      withinDeadline(
        deadline.timeoutMs,
        async () => {
          // No @defer or @stream: an execution yields one result, never a stream outliving the transaction.
          const result = await execute({
            ...args,
            contextValue: { ...(args.contextValue as Context), ...tx },
          });
          // A field that failed keeps nothing it wrote (services also write in savepoints).
          if (result.errors?.length) markRollbackOnly(tx.em);
          return result;
        },
        deadline.endsAt - Date.now(),
      ),
    options,
  );

/**
 * Each root field of a mutation in a transaction of its own, one after the other in document order,
 * answering what each did: a field that fails (an error, or a transaction that cannot commit) is null
 * with its error, and the fields before and after it keep what they committed. One transaction for a
 * whole document would make its answer lie: one failure rolls back every field (or, committed
 * piecemeal, reports failed what was stored). An execution without `data` (a refused
 * Idempotency-Key) refuses the whole request: it is answered alone, and no later field runs.
 */
async function executeFieldByField(
  execute: Execute,
  fields: RootField[],
  deadline: Deadline,
): Promise<ExecutionResult> {
  const data: Record<string, unknown> = {};
  const errors: GraphQLError[] = [];
  for (const field of fields) {
    let result: ExecutionResult;
    try {
      result = await inTransaction(execute, field.args, deadline);
    } catch (error) {
      result = {
        data: { [field.responseKey]: null },
        errors: [locatedError(error, field.nodes, [field.responseKey])],
      };
    }
    if (!result.data) return result;
    data[field.responseKey] = result.data[field.responseKey] ?? null;
    errors.push(...(result.errors ?? []));
  }
  return errors.length > 0 ? { data, errors } : { data };
}

/**
 * Runs every GraphQL execution in the environment's transaction: resolvers, dataloaders and services
 * get a context whose EntityManager is that transaction's. A query (its fields, loaders included) runs
 * in one transaction; a mutation runs each root field in its own (executeFieldByField). Registered
 * after the plugins that wrap execution themselves (Idempotency-Key), so it wraps them in turn: they
 * run once per root field, inside its transaction.
 */
export function useTenantTransaction(
  timeoutMs: number,
  onFenceFailure: (error: unknown) => void = () => {},
): Plugin<Context> {
  return {
    onExecute({ executeFn, setExecuteFn }) {
      const execute = executeFn as Execute;
      setExecuteFn((executeArgs) => {
        // One limit for the whole request: the fields of a mutation share it, and it started when the
        // request began to wait for its turn at the cost gate, if it waited.
        const deadline = requestDeadline(
          (executeArgs.contextValue as Partial<YogaInitialContext> | undefined)?.request,
          timeoutMs,
        );
        const fields = splitMutation(executeArgs);
        if (!fields) {
          // Only a query is a plain read (a replica may serve it). Its one transaction runs on the
          // request's own EntityManager: a fork of it would cost a second EntityManager for nothing.
          const query = operationOf(executeArgs.document, executeArgs.operationName)?.operation === 'query';
          return inTransaction(execute, executeArgs, deadline, { readOnly: query, only: true });
        }
        // Its reads wait for a replica to have replayed what it wrote.
        return executeFieldByField(execute, fields, deadline).finally(() =>
          afterWrite(executeArgs.contextValue as Context, onFenceFailure),
        );
      });
    },
  };
}
