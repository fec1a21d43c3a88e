import type { MikroORM } from '@mikro-orm/postgresql';
import { Response } from '@whatwg-node/fetch';
import { createServerAdapter } from '@whatwg-node/server';
import { createYoga } from 'graphql-yoga';
import { authenticate } from './auth/authenticate.ts';
import type { TokenCache } from './auth/token-cache.ts';
import { DEFAULT_INFLIGHT_COST, EXECUTION_LIMITS, type ExecutionLimits } from './config.ts';
import type { RequestContext } from './context.ts';
import { asGraphQLRefusal, maskError } from './graphql/errors.ts';
import { GRAPHIQL_ASSET_PATHS, useGraphiQL } from './graphql/graphiql.ts';
import { useCompiledQueries } from './graphql/jit.ts';
import { schema } from './graphql/schema.ts';
import { useStorableInput } from './graphql/storable-input.ts';
import { useTenantTransaction } from './graphql/tenant-transaction.plugin.ts';
import { type TrustedDocuments, useTrustedDocuments } from './graphql/trusted-documents.ts';
import { errorToProblem, problemResponse } from './http/problem.ts';
import { useIdempotentMutations } from './idempotency/idempotency.plugin.ts';
import { ClientAddressLimiter, clientAddress } from './limits/client-address-limit.ts';
import { corsAllowlist, useCorsAllowlist } from './limits/cors.ts';
import { type CostBudgetOptions, costBudgetSpentResponse, QueryCostBudget } from './limits/cost-budget.ts';
import { CostGate, costGatePlugins } from './limits/cost-gate.ts';
import { graphqlLimitPlugins } from './limits/graphql-limits.ts';
import { RateLimiter, type RateLimitOptions } from './limits/rate-limit.ts';
import { type Logger, requestScope } from './logger.ts';
import { observeDatabasePool } from './metrics.ts';
import { useAuditOperation } from './modules/audit/audit.plugin.ts';
import { routes } from './modules/registry.ts';
import {
  METRICS_PATH,
  newRequestScope,
  observeResponse,
  useObservability,
  useReadiness,
  yogaLogger,
} from './observability.ts';
import { API_REFERENCE_PATHS, useApiReference } from './rest/api-reference.ts';
import {
  methodNotAllowedResponse,
  notFoundResponse,
  RestRouter,
  type Route,
  type RouteMatch,
  withoutBody,
} from './rest/router.ts';

export type AppOptions = {
  orm: MikroORM;
  logger: Logger;
  /** Headers GraphiQL starts with when the link does not carry its own (`?headers=` JSON). */
  graphiqlHeaders?: Record<string, string>;
  /** /metrics is served only when set, and requires `Authorization: Bearer <metricsToken>`. */
  metricsToken?: string;
  /**
   * Keeps authenticated tokens in memory, revoked across processes by notification (TOKEN_CACHE_SECONDS);
   * every request reads its token from the database when absent. The caller starts and closes it.
   */
  tokenCache?: TokenCache;
  /** Requests each API token may send per window; unlimited when absent. */
  rateLimit?: RateLimitOptions;
  /** Query cost each API token earns per second and may save up; no budget when absent. */
  costBudget?: CostBudgetOptions;
  /** Origins whose browser pages may call the API (CORS); none when absent. */
  corsOrigins?: readonly string[];
  /** Requests failing authentication each client address may send per window; unlimited when absent. */
  authFailureLimit?: RateLimitOptions;
  /** How long a request may execute and how large a GraphQL response may be (EXECUTION_LIMITS by default). */
  executionLimits?: ExecutionLimits;
  /**
   * The total query cost of the GraphQL operations executing at once (GRAPHQL_INFLIGHT_COST), or the
   * gate itself (tests read it); DEFAULT_INFLIGHT_COST when absent.
   */
  maxCostInFlight?: number | CostGate;
  /** The only GraphQL operations /graphql runs (GRAPHQL_TRUSTED_DOCUMENTS); any when absent. */
  trustedDocuments?: TrustedDocuments;
  /** Routes served besides the documented ones (tests exercise the REST machinery through them). */
  extraRoutes?: Route[];
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: endpoints may point at loopback and private addresses (false by default). */
  allowPrivateWebhookTargets?: boolean;
};

export const GRAPHQL_PATH = '/graphql';

/** The whole HTTP surface: GraphQL at /graphql, the documented REST paths, and the probes. */
export function createApp({
  orm,
  logger,
  graphiqlHeaders = {},
  metricsToken,
  rateLimit,
  tokenCache,
  costBudget: costBudgetOptions,
  corsOrigins = [],
  authFailureLimit,
  executionLimits = EXECUTION_LIMITS,
  maxCostInFlight = DEFAULT_INFLIGHT_COST,
  extraRoutes = [],
  allowPrivateWebhookTargets = false,
  trustedDocuments,
}: AppOptions) {
  const router = new RestRouter([...routes, ...extraRoutes], logger, executionLimits.timeoutMs);
  const contexts = new WeakMap<Request, RequestContext>();
  const rateLimiter = rateLimit && new RateLimiter(rateLimit, orm);
  const costBudget = costBudgetOptions && new QueryCostBudget(costBudgetOptions);
  const addressLimiter = authFailureLimit && new ClientAddressLimiter(authFailureLimit);
  const gate = costGatePlugins(
    maxCostInFlight instanceof CostGate ? maxCostInFlight : new CostGate(maxCostInFlight),
    executionLimits.timeoutMs,
  );
  observeDatabasePool(() => orm.em.getConnection().getNativeClient());

  /**
   * The address's budget of failed authentications, authentication, then the token's rate limit: a
   * context to act in, or the response refusing it.
   */
  const admit = async (request: Request, pathname: string, serverContext: unknown) => {
    const address = clientAddress(serverContext);
    const refusal = addressLimiter?.refusal(address, pathname);
    if (refusal) return refusal;
    const auth = await authenticate(orm, request, tokenCache);
    if (auth instanceof Response) addressLimiter?.recordFailure(address);
    if (auth instanceof Response || !rateLimiter) return auth;
    return (await rateLimiter.admit(auth.em, auth.token.id, pathname)) ?? auth;
  };

  /** A documented REST operation (or the 404 / 405 of a path that is none), answered as problem+json on failure. */
  const serveRest = async (
    request: Request,
    pathname: string,
    match: RouteMatch,
    serverContext: unknown,
  ): Promise<Response> => {
    try {
      if (match.kind === 'not-found') return notFoundResponse(request);
      if (match.kind === 'method-not-allowed') return methodNotAllowedResponse(request, match.allow);
      const auth = await admit(request, pathname, serverContext);
      if (auth instanceof Response) return auth;
      const response = await router.handle(match.route, match.params, request, auth);
      return request.method === 'HEAD' ? await withoutBody(response) : response;
    } catch (error) {
      const { problem, headers } = errorToProblem(error, pathname);
      if (problem.status >= 500) logger.error({ err: error, path: pathname }, 'request failed');
      return problemResponse(problem, headers);
    }
  };

  const fixedPaths = ['/health', '/ready', METRICS_PATH, ...API_REFERENCE_PATHS, ...GRAPHIQL_ASSET_PATHS];
  const cors = corsAllowlist(corsOrigins);

  const yoga = createYoga<Record<string, unknown>, RequestContext>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    healthCheckEndpoint: '/health',
    landingPage: false,
    // Served by useGraphiQL: Yoga's own page writes the link's `?headers=` into an inline script.
    graphiql: false,
    batching: false,
    cors: false,
    // graphqlLimitPlugins reads every body under its 1 MiB limit; Yoga's own 25 MB limit would pass the
    // body through a second stream for nothing.
    maxRequestBodySize: false,
    logging: yogaLogger(logger),
    maskedErrors: { maskError },
    context: ({ request }) => {
      const ctx = contexts.get(request) as RequestContext;
      return allowPrivateWebhookTargets ? { ...ctx, allowPrivateWebhookTargets } : ctx;
    },
    plugins: [
      useObservability({
        logger,
        router,
        graphqlPath: GRAPHQL_PATH,
        fixedPaths,
        metricsToken,
      }),
      useCorsAllowlist(corsOrigins),
      useApiReference(routes, GRAPHQL_PATH),
      useGraphiQL({ path: GRAPHQL_PATH, headers: graphiqlHeaders }),
      useReadiness('/ready', async () => {
        await orm.em.getConnection().execute('select 1');
      }),
      // Input that could not be stored is refused before the query cost check coerces the variables.
      useTrustedDocuments(trustedDocuments),
      useStorableInput(),
      ...graphqlLimitPlugins(executionLimits, costBudget),
      useCompiledQueries(),
      useAuditOperation(),
      useIdempotentMutations(),
      // The cost gate around the execution (track) and around all that wraps it (admit): see cost-gate.ts.
      gate.track,
      useTenantTransaction(executionLimits.timeoutMs, (error) =>
        logger.error({ err: error }, 'could not record a write for read-your-writes on replicas'),
      ),
      gate.admit,
      {
        async onRequest({ request, url, serverContext, endResponse }) {
          if (url.pathname !== GRAPHQL_PATH) {
            // A fixed path's method that its plugin does not serve: the router's 404 or 405.
            const match = router.match(request.method, url.pathname);
            return endResponse(await serveRest(request, url.pathname, match, serverContext));
          }
          try {
            const throttled = costBudget?.retryAfter(request);
            if (throttled !== undefined)
              return endResponse(await asGraphQLRefusal(costBudgetSpentResponse(throttled, url.pathname)));
            const auth = await admit(request, url.pathname, serverContext);
            if (auth instanceof Response) return endResponse(await asGraphQLRefusal(auth));
            contexts.set(request, auth);
          } catch (error) {
            const { problem, headers } = errorToProblem(error, url.pathname);
            if (problem.status >= 500) logger.error({ err: error, path: url.pathname }, 'request failed');
            endResponse(problemResponse(problem, headers));
          }
        },
      },
    ],
  });

  /**
   * The one place that decides REST or Yoga. The REST paths skip Yoga's plugin chain (every plugin's
   * request and response hooks, on every request) and get here what those plugins gave them, in the
   * same order: the request id, the metrics sample and log line, the CORS headers. GraphQL, the probes,
   * /metrics, the API reference, GraphiQL's assets and CORS preflights go to Yoga.
   */
  const yogaPaths = new Set([GRAPHQL_PATH, ...fixedPaths]);
  const serveRestObserved = (request: Request, pathname: string, serverContext: unknown) => {
    const scope = newRequestScope(request);
    return requestScope.run(scope, async () => {
      const match = router.match(request.method, pathname);
      const response = await serveRest(request, pathname, match, serverContext);
      const route = match.kind === 'found' ? match.route.path : 'unmatched';
      observeResponse(logger, request, response, pathname, route, scope);
      cors.decorate(request, response);
      return response;
    });
  };

  return createServerAdapter<Record<string, unknown>>((request, serverContext) => {
    const { pathname } = urlOf(request);
    return yogaPaths.has(pathname) || cors.isPreflight(request)
      ? yoga.handleRequest(request, serverContext)
      : serveRestObserved(request, pathname, serverContext);
  });
}

/** whatwg-node's requests keep their parsed URL; any other is parsed here. */
function urlOf(request: Request): URL {
  return (request as Request & { parsedUrl?: URL }).parsedUrl ?? new URL(request.url);
}

export type App = ReturnType<typeof createApp>;
