import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import type { ExecutionResult } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { EXECUTION_LIMITS, type ExecutionLimits, MAX_QUERY_COST } from '../config.ts';
import type { RequestContext } from '../context.ts';
import { assertUtf8, BodyError, readBodyBytes } from '../http/body.ts';
import type { QueryCostBudget } from './cost-budget.ts';
import { priceQuery } from './query-cost.ts';

/**
 * What one GraphQL document may ask for. Depth fits the deepest honest query (a connection's node and
 * its nested objects) with room to spare; the cost limit bounds the fan-out of nested lists (see
 * query-cost.ts).
 */
export const GRAPHQL_LIMITS = {
  maxDepth: 10,
  maxAliases: 15,
  maxTokens: 2000,
  maxCost: MAX_QUERY_COST,
  maxDirectives: 50,
} as const;

/**
 * The REST body limit (1 MiB) for GraphQL POSTs too, whatever their content type: the body is read
 * under the limit before Yoga's own parser for that content type sees it. It must be UTF-8 (400
 * otherwise): every parser would decode it leniently, and the schema takes no file uploads.
 */
function useBodyLimit(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (request.method !== 'POST' || !requestParser) return;
      setRequestParser(async (original) => {
        let body: Uint8Array<ArrayBuffer>;
        try {
          body = new Uint8Array(assertUtf8(await readBodyBytes(original)));
        } catch (error) {
          if (!(error instanceof BodyError)) throw error;
          throw createGraphQLError(error.message, { extensions: { http: { status: error.status } } });
        }
        // Yoga's own Request class: its parser reads that body at once, a global Request's through a stream.
        return requestParser(
          new fetchAPI.Request(original.url, { method: 'POST', headers: original.headers, body }),
        );
      });
    },
  };
}

/**
 * Refuses an operation costing more than the limit before it executes: no transaction is opened and
 * no resolver runs. Priced at execution, not validation, because the price depends on the variables
 * and Yoga caches a document's validation regardless of them. A costly operation then spends the
 * token's cost budget, and is answered 429 QUERY_BUDGET_EXCEEDED when the budget cannot pay for it.
 */
function useQueryCost(maxCost: number, budget: QueryCostBudget | undefined): Plugin {
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const context = args.contextValue as Partial<RequestContext> & { request?: Request };
      const { cost, errors } = priceQuery(
        {
          schema: args.schema,
          document: args.document,
          variableValues: args.variableValues ?? {},
          operationName: args.operationName,
          context,
        },
        maxCost,
      );
      if (errors.length > 0) return setResultAndStopExecution({ errors });
      if (!budget || !context.em || !context.token || !context.request) return;
      const charge = await budget.charge(context.em, context.token.id, context.request, cost);
      if (charge.admitted) return;
      setResultAndStopExecution({
        errors: [
          createGraphQLError(
            `This API token has spent its query cost budget; the query costs ${cost}. Retry in ${charge.retryAfterSeconds} s, or ask for smaller pages or fewer fields.`,
            {
              extensions: {
                code: 'QUERY_BUDGET_EXCEEDED',
                cost,
                retryAfter: charge.retryAfterSeconds,
                http: { status: 429, headers: { 'retry-after': String(charge.retryAfterSeconds) } },
              },
            },
          ),
        ],
      });
    },
  };
}

/**
 * Replaces a serialised result larger than `maxBytes` by a RESPONSE_TOO_LARGE error. It hooks the
 * result's own serialiser (graphql-jit's compiled one for queries, Yoga's JSON.stringify otherwise),
 * so the body is serialised once and measured, never sent in part.
 */
function useResponseSizeLimit(maxBytes: number): Plugin {
  return {
    onExecutionResult({ result, setResult }) {
      if (!result || Symbol.asyncIterator in result) return;
      const serialise = result.stringify ?? JSON.stringify;
      const stringify = (value: ExecutionResult) => {
        const body = serialise(value);
        const bytes = Buffer.byteLength(body);
        if (bytes <= maxBytes) return body;
        return JSON.stringify({
          errors: [
            {
              message: `The response would be ${bytes} bytes; the limit is ${maxBytes}. Ask for smaller pages or fewer fields.`,
              extensions: { code: 'RESPONSE_TOO_LARGE', bytes, maxBytes },
            },
          ],
        });
      };
      setResult({ ...result, stringify });
    },
  };
}

/**
 * Document limits (query cost; graphql-armor, which also hides field suggestions from error messages),
 * the response-size bound and CSRF
 * prevention: a browser may not send a GraphQL request without a preflight, so a GET or a form/text
 * POST must carry the `x-graphql-yoga-csrf` header (JSON POSTs are preflighted already).
 */
export function graphqlLimitPlugins(
  { maxResponseBytes }: ExecutionLimits = EXECUTION_LIMITS,
  costBudget?: QueryCostBudget,
) {
  return [
    useCSRFPrevention(),
    useBodyLimit(),
    useQueryCost(GRAPHQL_LIMITS.maxCost, costBudget),
    useResponseSizeLimit(maxResponseBytes),
    EnvelopArmorPlugin({
      maxDepth: { n: GRAPHQL_LIMITS.maxDepth },
      maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
      maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
      costLimit: { enabled: false },
      maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
    }),
  ];
}
