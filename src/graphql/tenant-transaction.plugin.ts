import type { ExecutionResult } from 'graphql';
import type { Plugin, YogaInitialContext } from 'graphql-yoga';
import type { RequestContext } from '../context.ts';
import { inRequestTransaction } from '../db/tenant-transaction.ts';
import { withinDeadline } from '../limits/deadline.ts';

type Context = RequestContext & YogaInitialContext;

/**
 * Runs every GraphQL execution, queries included, in the environment's transaction: resolvers,
 * dataloaders and services get a context whose EntityManager is that transaction's. Registered after
 * the plugins that wrap execution themselves (Idempotency-Key), so it wraps them in turn. A mutation's
 * fields commit together when the execution ends; a field answering userErrors has written nothing
 * (services write in savepoints). An execution still running after `timeoutMs` is answered TIMEOUT and
 * its transaction rolled back.
 */
export function useTenantTransaction(timeoutMs: number): Plugin<Context> {
  return {
    onExecute({ executeFn, setExecuteFn }) {
      setExecuteFn((executeArgs) =>
        inRequestTransaction(executeArgs.contextValue as Context, (tx) =>
          withinDeadline(
            timeoutMs,
            async () =>
              // No @defer or @stream: an execution yields one result, never a stream outliving the transaction.
              (await executeFn({
                ...executeArgs,
                contextValue: { ...(executeArgs.contextValue as Context), ...tx },
              })) as ExecutionResult,
          ),
        ),
      );
    },
  };
}
