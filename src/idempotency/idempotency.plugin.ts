import { type ExecutionResult, print } from 'graphql';
import { createGraphQLError, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import type { RequestContext } from '../context.ts';
import { DomainError, type DomainErrorCode, IN_FLIGHT_RETRY_AFTER } from '../errors.ts';
import { responseKeyOf } from '../graphql/mutation-fields.ts';
import { observeMutation } from '../graphql/mutation-outcome.ts';
import { operationOf } from '../graphql/operation.ts';
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
 * Idempotency-Key for GraphQL mutations (queries ignore it). A mutation runs root field by root field,
 * each in its own transaction (useTenantTransaction, registered after this plugin, wraps it and calls
 * it once per field), and each field's outcome is stored with the key in the transaction that did its
 * work (IdempotencyService.runPart): a crash leaves every field either done and stored or neither. A
 * retry answers the stored outcome of every field that succeeded and runs the others afresh (they
 * wrote nothing), so a document whose fields all succeeded replays exactly its first answer, with
 * `Idempotent-Replayed: true`. The same document, operation and variables make the same request.
 */
export function useIdempotentMutations(): Plugin<Context> {
  const replayed = new WeakSet<Request>();
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      if (operationOf(args.document, args.operationName)?.operation !== 'mutation') return;
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

      // Called once per root field, with an execution of that field alone, inside its transaction.
      setExecuteFn(async (fieldArgs) => {
        const part = responseKeyOf(fieldArgs);
        let executed: ExecutionResult | undefined;
        try {
          const tx = fieldArgs.contextValue as Context;
          const outcome = await new IdempotencyService(tx).runPart(
            idempotencyKey,
            fingerprint,
            part,
            async () => {
              const { result, failed } = await observeMutation(
                async () => (await executeFn(fieldArgs)) as ExecutionResult,
              );
              executed = result;
              return failed || result.errors?.length ? undefined : result.data?.[part];
            },
          );
          if (!outcome.replayed) return executed as ExecutionResult;
          replayed.add(ctx.request);
          return { data: { [part]: outcome.value } };
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
