import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { type ExecutionResult, GraphQLError } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { EXECUTION_LIMITS, type ExecutionLimits, MAX_QUERY_COST } from '../config.ts';
import type { RequestContext } from '../context.ts';
import { assertUtf8, BODY_ERROR_CODES, BodyError, readBodyBytes } from '../http/body.ts';
import type { QueryCostBudget } from './cost-budget.ts';
import { recordOperationCost } from './cost-gate.ts';
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
        let bytes: Buffer;
        try {
          bytes = assertUtf8(await readBodyBytes(original));
        } catch (error) {
          if (!(error instanceof BodyError)) throw error;
          throw createGraphQLError(error.message, {
            extensions: { code: BODY_ERROR_CODES[error.status].code, http: { status: error.status } },
          });
        }
        // A JSON body goes to Yoga's JSON parser, which reads nothing of its request but `json()`: it is
        // handed the bytes already read, parsed as its Request's `json()` parses them (whatwg-node's
        // Body: the UTF-8 text, JSON.parse, a SyntaxError naming the text), without a second Request.
        if (isJsonPost(original)) return requestParser(jsonBody(bytes) as Request);
        // Yoga's own Request class: its parser reads that body at once, a global Request's through a stream.
        return requestParser(
          new fetchAPI.Request(original.url, {
            method: 'POST',
            headers: original.headers,
            body: new Uint8Array(bytes),
          }),
        );
      });
    },
  };
}

/** Whether Yoga parses `request` as JSON (its isPOSTJsonRequest: the first content type, parameters aside). */
function isJsonPost(request: Request): boolean {
  const type = request.headers.get('content-type')?.split(',')[0];
  if (!type) return false;
  return ['application/json', 'application/graphql+json'].some(
    (json) => type === json || type.startsWith(`${json};`),
  );
}

/** What Yoga's JSON parser needs of a request: `json()`, as whatwg-node's Body answers it. */
function jsonBody(bytes: Buffer): Pick<Request, 'json'> {
  return {
    json: () =>
      new Promise((resolve) => {
        const text = bytes.toString('utf-8');
        try {
          resolve(JSON.parse(text));
        } catch (error) {
          if (error instanceof SyntaxError) error.message += `, "${text}" is not valid JSON`;
          throw error;
        }
      }),
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
      // The cost gate (registered last) weighs the operation by it.
      recordOperationCost(context.request, cost);
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
 *
 * A body large enough to be measured is measured by encoding it, and those bytes are what is sent:
 * given the string, node:http would prepend the headers to it (a second copy of the body in the heap)
 * and encode it again for the socket (a third, outside it), for answers of up to `maxBytes`.
 */
function useResponseSizeLimit(maxBytes: number): Plugin {
  const encoded = new WeakMap<Request, Buffer<ArrayBuffer>>();
  return {
    onExecutionResult({ request, result, setResult }) {
      if (!result || Symbol.asyncIterator in result) return;
      const serialise = result.stringify ?? JSON.stringify;
      const stringify = (value: ExecutionResult) => {
        const body = serialise(value);
        // A UTF-16 code unit is at most 3 bytes of UTF-8: a short answer needs no count of its bytes.
        if (body.length * 3 <= maxBytes) return body;
        // Past `maxBytes` code units it is too large whatever they encode to (each is a byte at least).
        const encoding = body.length <= maxBytes ? Buffer.from(body) : undefined;
        if (encoding && encoding.length <= maxBytes) {
          encoded.set(request, encoding);
          return body;
        }
        const bytes = encoding?.length ?? Buffer.byteLength(body);
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
    onResponse({ request, response, setResponse, fetchAPI }) {
      const bytes = encoded.get(request);
      if (!bytes) return;
      encoded.delete(request);
      // The same status and headers (its content-length included) over the bytes instead of the string.
      setResponse(
        new fetchAPI.Response(bytes, {
          status: response.status,
          statusText: response.statusText,
          headers: response.headers,
        }),
      );
    },
  };
}

/**
 * graphql-armor's refusals with a code of their own and a 400, instead of a bare "Syntax Error: …"
 * GraphQLError: the refusal is thrown in place of armor's own error (the token limit throws from the
 * lexer; the others from their validation rule, which Envelop reports as a validation error).
 */
function coded(code: string) {
  return {
    propagateOnRejection: true,
    onReject: [
      (_context: unknown, error: GraphQLError) => {
        throw new GraphQLError(error.message.replace(/^Syntax Error: /, ''), {
          extensions: { code, http: { status: 400 } },
        });
      },
    ],
  };
}

/**
 * Gives every parse and validation error a code: GRAPHQL_PARSE_FAILED for a document that is not
 * GraphQL, GRAPHQL_VALIDATION_FAILED for one that does not fit the schema, BAD_USER_INPUT for variables that
 * do not fit their types (a coded refusal, such as a limit's, keeps its own).
 */
function useCodedRequestErrors(): Plugin {
  const withCode = (error: GraphQLError, code: string) =>
    error.extensions?.code
      ? error
      : new GraphQLError(error.message, {
          nodes: error.nodes,
          source: error.source,
          positions: error.positions,
          path: error.path,
          originalError: error.originalError,
          extensions: { ...error.extensions, code },
        });
  return {
    onParse() {
      return ({ result, replaceParseResult }) => {
        if (result instanceof GraphQLError) replaceParseResult(withCode(result, 'GRAPHQL_PARSE_FAILED'));
      };
    },
    onValidate() {
      return ({ result, setResult }) => {
        if (result.length > 0) setResult(result.map((error) => withCode(error, 'GRAPHQL_VALIDATION_FAILED')));
      };
    },
    // Variables that do not coerce to their declared types are refused by the executor, before any
    // field runs: such an error has no path.
    onExecutionResult({ result, setResult }) {
      if (!result || Symbol.asyncIterator in result || !result.errors) return;
      if (result.errors.every((error) => error.extensions?.code)) return;
      setResult({
        ...result,
        errors: result.errors.map((error) =>
          error.path ? withCode(error, 'INTERNAL_SERVER_ERROR') : withCode(error, 'BAD_USER_INPUT'),
        ),
      });
    },
  };
}

/** The header a GET or a form/text POST must carry (any value): a browser sends it only after a preflight. */
export const CSRF_HEADER = 'x-graphql-yoga-csrf';

/** Content types a browser may POST cross-site without a preflight. */
const NON_PREFLIGHTED_CONTENT_TYPES = [
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'text/plain',
];

/**
 * CSRF prevention (as @graphql-yoga/plugin-csrf-prevention), with a refusal that says what to send:
 * clients such as urql send queries as GET by default, and a bare 403 left them guessing.
 */
function useCsrfPrevention(): Plugin {
  return {
    onRequestParse({ request }) {
      const type = request.headers.get('content-type')?.toLowerCase();
      if (type && !NON_PREFLIGHTED_CONTENT_TYPES.some((simple) => type.startsWith(simple))) return;
      if (request.headers.has(CSRF_HEADER)) return;
      throw createGraphQLError(
        `A ${request.method} request to /graphql must carry the header ${CSRF_HEADER} (any value, e.g. "1"), ` +
          'which a browser sends only after a CORS preflight; or send a POST with Content-Type: application/json. ' +
          'In urql set preferGetMethod: false, or add the header through fetchOptions.',
        { extensions: { code: 'CSRF_HEADER_REQUIRED', header: CSRF_HEADER, http: { status: 403 } } },
      );
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
    useCsrfPrevention(),
    useBodyLimit(),
    useQueryCost(GRAPHQL_LIMITS.maxCost, costBudget),
    useResponseSizeLimit(maxResponseBytes),
    EnvelopArmorPlugin({
      maxDepth: { n: GRAPHQL_LIMITS.maxDepth, ...coded('QUERY_TOO_DEEP') },
      maxAliases: { n: GRAPHQL_LIMITS.maxAliases, ...coded('TOO_MANY_ALIASES') },
      maxTokens: { n: GRAPHQL_LIMITS.maxTokens, ...coded('TOO_MANY_TOKENS') },
      costLimit: { enabled: false },
      maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives, ...coded('TOO_MANY_DIRECTIVES') },
    }),
    useCodedRequestErrors(),
  ];
}
