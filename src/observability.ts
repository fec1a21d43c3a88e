import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  type SelectionNode,
} from 'graphql';
import { type Plugin, shouldRenderGraphiQL, useReadinessCheck, type YogaLogger } from 'graphql-yoga';
import { validate as isUuid } from 'uuid';
import { DomainError, toJsonPointer } from './errors.ts';
import { operationOf, perDocument } from './graphql/operation.ts';
import { CLIENT_CLOSED_REQUEST } from './http/body.ts';
import { problemResponse } from './http/problem.ts';
import { type Logger, type RequestScope, requestScope } from './logger.ts';
import { httpRequestDuration, httpRequestsTotal, metricsRegistry } from './metrics.ts';
import type { RestRouter } from './rest/router.ts';

export const METRICS_PATH = '/metrics';

/** Short printable ids only: a client-chosen id lands in every log line and must not bloat or forge them. */
const SANE_REQUEST_ID = /^[\w.:/+=-]{1,128}$/;

/** Probes and scrapes arrive every few seconds; at info level they would drown the requests that matter. */
const QUIET_PATHS = new Set(['/health', '/ready', METRICS_PATH]);

/**
 * Every label value comes from a set the server knows: a label per client-chosen string (an operation
 * name, a path, a method) is a new series each, kept for the life of the process, and 90 requests with
 * 400 KB operation names once took the process to 2 GB.
 */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const OTHER_GRAPHQL = 'graphql:other';
/** Introspection fields, which every schema answers at its root besides its own. */
const META_FIELDS = new Set(['__schema', '__type', '__typename']);

export type ObservabilityOptions = {
  logger: Logger;
  router: RestRouter;
  graphqlPath: string;
  /** Paths served outside the REST router and GraphQL; they label their own metrics. */
  fixedPaths: readonly string[];
  /** /metrics is served only when this is set, and answers only `Authorization: Bearer <metricsToken>`. */
  metricsToken?: string;
};

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * The label of a GraphQL operation: `graphql:<type>:<root field>` with a root field of the schema (or
 * `multiple` when the operation selects several), `graphql:other` for what the schema does not know.
 */
export function graphqlRoute(schema: GraphQLSchema, document: DocumentNode, operationName?: string): string {
  let bySchema = routes.get(schema);
  if (!bySchema) {
    bySchema = perDocument((document, operationName) => routeOf(schema, document, operationName));
    routes.set(schema, bySchema);
  }
  return bySchema(document, operationName);
}

/** Labels remembered per schema and parsed document (see perDocument). */
const routes = new WeakMap<
  GraphQLSchema,
  (document: DocumentNode, operationName?: string | null) => string
>();

function routeOf(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): string {
  const operation = operationOf(document, operationName);
  const fields = operation && schema.getRootType(operation.operation)?.getFields();
  if (!operation || !fields) return OTHER_GRAPHQL;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const names = new Set<string>();
  const spread = new Set<string>();
  const pending: SelectionNode[] = [...operation.selectionSet.selections];
  for (let selection = pending.pop(); selection; selection = pending.pop()) {
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      if (!Object.hasOwn(fields, name) && !META_FIELDS.has(name)) return OTHER_GRAPHQL;
      names.add(name);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      pending.push(...selection.selectionSet.selections);
    } else if (!spread.has(selection.name.value)) {
      spread.add(selection.name.value);
      const fragment = fragments.get(selection.name.value);
      if (!fragment) return OTHER_GRAPHQL;
      pending.push(...fragment.selectionSet.selections);
    }
  }
  if (names.size === 0) return OTHER_GRAPHQL;
  return `graphql:${operation.operation}:${names.size === 1 ? [...names][0] : 'multiple'}`;
}

/**
 * One log line and one metrics sample per request, with a request id echoed in `x-request-id`;
 * serves /metrics when it has a token. Logs name the route and never the query string, headers or
 * bodies, where tokens travel (GraphiQL links carry them in `?headers=`).
 */
export function useObservability(options: ObservabilityOptions): Plugin {
  const { logger, router, graphqlPath, metricsToken } = options;
  const fixedPaths = new Set(options.fixedPaths);
  const expectedAuthorization = metricsToken ? digest(`Bearer ${metricsToken}`) : undefined;
  let schema: GraphQLSchema | undefined;

  const routeLabel = (request: Request, pathname: string, scope: RequestScope): string => {
    if (pathname === graphqlPath) {
      if (request.method === 'GET' && shouldRenderGraphiQL(request)) return 'graphiql';
      return scope.graphqlRoute ?? 'graphql';
    }
    if (fixedPaths.has(pathname)) return pathname;
    const match = router.match(request.method, pathname);
    return match.kind === 'found' ? match.route.path : 'unmatched';
  };

  return {
    instrumentation: {
      request({ request }, wrapped) {
        return requestScope.run(newRequestScope(request), wrapped);
      },
    },

    onSchemaChange({ schema: current }) {
      schema = current;
    },

    onParse() {
      return ({ result, context }) => {
        const scope = requestScope.getStore();
        if (!scope) return;
        const operationName = (context as { params?: { operationName?: string } }).params?.operationName;
        scope.graphqlRoute =
          result && !(result instanceof Error) && schema
            ? graphqlRoute(schema, result, operationName)
            : OTHER_GRAPHQL;
      };
    },

    // Without a token /metrics is not served: it names every tenant's traffic, and a listener reachable
    // by API clients is no place for that to be open.
    async onRequest({ request, url, endResponse }) {
      if (!expectedAuthorization || url.pathname !== METRICS_PATH || request.method !== 'GET') return;
      const given = digest(request.headers.get('authorization') ?? '');
      if (!timingSafeEqual(given, expectedAuthorization)) {
        return endResponse(
          problemResponse(
            {
              title: 'Unauthorized',
              status: 401,
              detail: 'Send the metrics token as Authorization: Bearer <METRICS_TOKEN>.',
              instance: url.pathname,
            },
            { 'www-authenticate': 'Bearer realm="metrics"' },
          ),
        );
      }
      let text: string;
      try {
        text = await metricsRegistry.metrics();
      } catch (error) {
        logger.error({ err: error }, 'metrics could not be rendered');
        return endResponse(
          problemResponse({
            title: 'Internal Server Error',
            status: 500,
            detail: 'The metrics could not be rendered; the server log says why.',
            instance: url.pathname,
          }),
        );
      }
      endResponse(new Response(text, { headers: { 'content-type': metricsRegistry.contentType } }));
    },

    onResponse({ request, response }) {
      const scope = requestScope.getStore();
      if (!scope) return;
      const { pathname } = new URL(request.url);
      observeResponse(logger, request, response, pathname, routeLabel(request, pathname, scope), scope);
    },
  };
}

/**
 * Yoga's readiness probe at `endpoint`, asked only of the requests it can answer. Its own hook tests every
 * request's URL against a URLPattern (15-40 µs a request, a GraphQL request included) after its two
 * cheaper tests; the pattern, a pathname alone, matches exactly when `url.pathname` is `endpoint`.
 */
export function useReadiness(endpoint: string, check: () => Promise<void>): Plugin {
  const readiness = useReadinessCheck({ endpoint, check });
  return {
    ...readiness,
    onRequest(payload) {
      if (payload.url.pathname !== endpoint && !payload.request.url.endsWith(endpoint)) return;
      return readiness.onRequest?.(payload);
    },
  };
}

/** The request's id (its sane `x-request-id`, or a new one) and start, which its log lines and metrics carry. */
export function newRequestScope(request: Request): RequestScope {
  const given = request.headers.get('x-request-id');
  const requestId = given && SANE_REQUEST_ID.test(given) ? given : randomUUID();
  return { requestId, startedAt: process.hrtime.bigint() };
}

/**
 * What every answer gets, from the observability plugin or, for the REST paths served without Yoga
 * (src/app.ts), from the REST front: `x-request-id`, the metrics sample and the log line.
 */
export function observeResponse(
  logger: Logger,
  request: Request,
  response: Response,
  pathname: string,
  route: string,
  scope: RequestScope,
): void {
  response.headers.set('x-request-id', scope.requestId);
  const seconds = Number(process.hrtime.bigint() - scope.startedAt) / 1e9;
  // A client that went away, before sending its whole body or before its answer, receives nothing:
  // whatever the server made of the request, it ended by the client's doing, and counts as nginx
  // counts it (499), never as a server error.
  const clientClosed = request.signal.aborted || response.status === CLIENT_CLOSED_REQUEST;
  const status = clientClosed ? CLIENT_CLOSED_REQUEST : response.status;
  const method = METHODS.has(request.method) ? request.method : 'other';
  const labels = { method, route, status: String(status) };
  httpRequestsTotal.inc(labels);
  httpRequestDuration.observe(labels, seconds);

  const level = status >= 500 ? 'error' : QUIET_PATHS.has(pathname) ? 'debug' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const environment = request.headers.get('x-environment')?.trim().toLowerCase();
  logger[level](
    {
      environmentId: environment && isUuid(environment) ? environment : undefined,
      method: request.method,
      route,
      path: pathname,
      status,
      durationMs: Math.round(seconds * 1e5) / 100,
    },
    clientClosed ? 'client closed the request' : 'request completed',
  );
}

/**
 * The logger Yoga writes through. Yoga logs the original of every error it masks at error level, stack
 * included; a caller's mistake (a domain error, or a GraphQL error answered with a 4xx) is no fault of
 * the server and goes to info, as its code and the fields it names: never a stack, never the message,
 * which may quote what the client sent.
 */
export function yogaLogger(logger: Logger): YogaLogger {
  return {
    debug: (...args) => logger.debug(args.join(' ')),
    info: (...args) => logger.info(args.join(' ')),
    warn: (...args) => logger.warn(args.join(' ')),
    error: (error: unknown, ...rest) => {
      const refusal = clientRefusal(error);
      if (refusal) logger.info(refusal, 'request refused');
      else logger.error({ err: error }, rest.join(' ') || 'request failed');
    },
  };
}

function clientRefusal(error: unknown): { code: string; fields?: string[] } | undefined {
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  if (original instanceof DomainError) {
    const fields = original.issues.map((issue) => toJsonPointer(issue.path));
    return fields.length > 0 ? { code: original.code, fields } : { code: original.code };
  }
  if (!(original instanceof GraphQLError)) return undefined;
  const status = (original.extensions.http as { status?: number } | undefined)?.status;
  if (status === undefined || status >= 500) return undefined;
  return { code: String(original.extensions.code ?? status) };
}
