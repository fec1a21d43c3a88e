import { type ExecutionResult, getOperationAST, print } from 'graphql';
import { createGraphQLError, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import type { RequestContext } from '../context.ts';
import { DomainError, type DomainErrorCode, IN_FLIGHT_RETRY_AFTER } from '../errors.ts';
import { observeMutation } from '../graphql/mutation-outcome.ts';
import {
  IDEMPOTENT_REPLAYED_HEADER,
  IdempotencyService,
  idempotencyKeyOf,
  requestFingerprint,
} from './idempotency.service.ts';

type Context = RequestContext & YogaInitialContext;

const HTTP_STATUS: Partial<Record<DomainErrorCode, number>> = {
  INVALID_INPUT: 400,
  IDEMPOTENCY_IN_FLIGHT: 409,
  IDEMPOTENCY_MISMATCH: 422,
};

const requestError = (error: DomainError): ExecutionResult => {
  const http = {
    status: HTTP_STATUS[error.code] ?? 400,
    ...(error.code === 'IDEMPOTENCY_IN_FLIGHT' ? { headers: { 'retry-after': IN_FLIGHT_RETRY_AFTER } } : {}),
  };
  return { errors: [createGraphQLError(error.message, { extensions: { code: error.code, http } })] };
};

/**
 * Idempotency-Key for GraphQL mutations (queries ignore it). The whole execution runs inside
 * IdempotencyService.run, in the request's transaction (useTenantTransaction, registered after this
 * plugin, wraps it), so every resolver's writes commit together with the stored result. The same
 * document, operation and variables make the same request; a replay answers the stored result with
 * `Idempotent-Replayed: true`.
 */
export function useIdempotentMutations(): Plugin<Context> {
  const replayed = new WeakSet<Request>();
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      if (getOperationAST(args.document, args.operationName)?.operation !== 'mutation') return;
      const ctx = args.contextValue;
      let key: string | undefined;
      try {
        key = idempotencyKeyOf(ctx.request);
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        setExecuteFn(async () => requestError(error));
        return;
      }
      if (key === undefined) return;
      const fingerprint = requestFingerprint('graphql', {
        query: print(args.document),
        operationName: args.operationName ?? null,
        variables: args.variableValues ?? {},
      });
      const idempotencyKey = key;

      setExecuteFn(async (executeArgs) => {
        let executed: ExecutionResult | undefined;
        try {
          const tx = executeArgs.contextValue as Context;
          const response = await new IdempotencyService(tx).run(idempotencyKey, fingerprint, async () => {
            const { result, failed } = await observeMutation(
              async () => (await executeFn(executeArgs)) as ExecutionResult,
            );
            executed = result;
            const succeeded = !failed && !result.errors?.length;
            // Not a status the client sees: the response is stored only when it is below 400.
            return { status: succeeded ? 200 : 422, headers: {}, body: JSON.stringify(result) };
          });
          if (!response.replayed) return executed as ExecutionResult;
          replayed.add(ctx.request);
          return JSON.parse(response.body ?? '{}') as ExecutionResult;
        } catch (error) {
          if (error instanceof DomainError && !executed) return requestError(error);
          throw error;
        }
      });
    },
    onResponse({ request, response }) {
      if (replayed.has(request)) response.headers.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
    },
  };
}
