import { useGraphQlJit } from '@envelop/graphql-jit';
import type { ExecutionArgs } from 'graphql';
import { operationOf, variablesFit } from './operation.ts';

/**
 * Queries run as code compiled once per document (graphql-jit), with a compiled result serialiser:
 * a page of 50 invoices resolves its thousands of fields several times faster. Mutations keep the
 * standard executor: their payloads are small and the plugins that wrap them are tested on it. A
 * query whose variables do not coerce runs on the standard executor too, so that its errors read
 * exactly as GraphQL.js words them (graphql-jit words them its own way).
 */
export function useCompiledQueries() {
  return useGraphQlJit(
    {},
    {
      enableIf: ({ schema, document, operationName, variableValues }: ExecutionArgs) => {
        const operation = operationOf(document, operationName);
        if (operation?.operation !== 'query') return false;
        return variablesFit(schema, operation.variableDefinitions ?? [], variableValues ?? {});
      },
    },
  );
}
