import { Response } from '@whatwg-node/fetch';
import Negotiator from 'negotiator';
import { validate as isUuid } from 'uuid';
import type { z } from 'zod';
import { setAuditContext } from '../audit/audit.context.ts';
import { grantsScope, missingScope } from '../auth/scopes.ts';
import { EXECUTION_LIMITS } from '../config.ts';
import type { RequestContext } from '../context.ts';
import { afterWrite, inRequestTransaction } from '../context.ts';
import { DomainError } from '../errors.ts';
import { BODY_ERROR_CODES, BodyError, readJsonBody } from '../http/body.ts';
import { errorToProblem, problemResponse } from '../http/problem.ts';
import {
  IDEMPOTENT_REPLAYED_HEADER,
  IdempotencyService,
  idempotencyKeyOf,
  type ReplayableResponse,
  requestFingerprint,
} from '../idempotency/idempotency.service.ts';
import { withinDeadline } from '../limits/deadline.ts';
import type { Logger } from '../logger.ts';
import { assertStorableInput } from '../validation.ts';
import { streamInTransaction } from './stream.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type RestRequest = {
  ctx: RequestContext;
  params: Record<string, string>;
  /** The parsed JSON body (undefined for methods without one). */
  body: unknown;
  request: Request;
  /** The representation the client's Accept header chose: `application/json` or one of `response.alternatives`. */
  mediaType: string;
};

/**
 * A `Uint8Array` body is sent as it is, with the content type the handler names; anything else as JSON.
 * A GET may instead answer with `stream`: chunks produced after the handler returned, in a transaction
 * of their own that lasts while the client reads (see streamInTransaction).
 */
export type RestResult =
  | { status: number; body: unknown; headers?: Record<string, string> }
  | {
      status: number;
      stream: (ctx: RequestContext) => AsyncIterable<Uint8Array>;
      headers: Record<string, string>;
    };

const JSON_MEDIA_TYPE = 'application/json';

/**
 * One documented method + path pair. Path parameters are written `{name}` and are UUIDs. `body` is
 * the zod schema the handler parses the request with and `response.schema` the shape it answers
 * with: the same schemas document the operation (OpenAPI), so the two cannot drift apart. A schema
 * given `.meta({ id: 'Name' })` is published once, as the named component `Name`.
 */
export type Route = {
  method: HttpMethod;
  path: string;
  summary: string;
  body?: z.ZodType;
  /** The query parameters the handler reads (it parses them itself); documented like the body. */
  query?: z.ZodObject;
  response: {
    status: number;
    description: string;
    schema: z.ZodType;
    /**
     * Media types of other representations of the same answer, chosen by Accept (JSON stays the
     * default). A route with alternatives answers 406 when the Accept header allows none of them.
     */
    alternatives?: string[];
    /** A bodiless operation that can still answer 409, because of the state of what it reads. */
    conflicts?: boolean;
    /**
     * The one media type the operation answers instead of JSON, whatever the Accept header says
     * (an explicit path such as `/invoices/{invoiceId}/ubl.xml`); `schema` describes it.
     */
    mediaType?: string;
  };
  handler: (req: RestRequest) => Promise<RestResult>;
  /** A path this service adds to the interface contract: documented with `x-beyond-contract: true`. */
  beyondContract?: boolean;
};

type CompiledRoute = Route & {
  pattern: RegExp;
  paramNames: string[];
  /** JSON and the response's alternatives, in the order content negotiation prefers them; none without alternatives. */
  mediaTypes?: string[];
};

export type RouteMatch =
  | { kind: 'found'; route: CompiledRoute; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allow: string[] }
  | { kind: 'not-found' };

const METHODS_WITH_BODY = new Set<string>(['POST', 'PUT', 'PATCH']);

export class RestRouter {
  private readonly routes: CompiledRoute[];
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  /** The routes by their path's first segment, so a request's path is tested against its few only. */
  private readonly byFirstSegment = new Map<string, CompiledRoute[]>();
  /** Routes whose path starts with a parameter (none today): tested against every path. */
  private readonly fromAnyFirstSegment: CompiledRoute[] = [];

  /** `timeoutMs`: how long a handler may run before its transaction is rolled back (TIMEOUT, 503). */
  constructor(routes: Route[], logger: Logger, timeoutMs: number = EXECUTION_LIMITS.timeoutMs) {
    this.logger = logger;
    this.timeoutMs = timeoutMs;
    this.routes = routes.map((route) => {
      const paramNames = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
      const source = route.path.replaceAll('.', '\\.').replace(/\{\w+\}/g, '([^/]+)');
      const { alternatives } = route.response;
      const mediaTypes = alternatives ? [JSON_MEDIA_TYPE, ...alternatives] : undefined;
      return { ...route, paramNames, pattern: new RegExp(`^${source}/?$`), mediaTypes };
    });
    for (const route of this.routes) {
      const first = route.path.split('/')[1] ?? '';
      if (first.includes('{')) this.fromAnyFirstSegment.push(route);
      else this.byFirstSegment.set(first, [...(this.byFirstSegment.get(first) ?? []), route]);
    }
  }

  private readonly logFenceFailure = (error: unknown) =>
    this.logger.error({ err: error }, 'could not record a write for read-your-writes on replicas');

  /** A HEAD matches the path's GET (RFC 9110 §9.3.2); the caller drops the body (withoutBody). */
  match(method: string, pathname: string): RouteMatch {
    const end = pathname.indexOf('/', 1);
    const first = pathname.slice(1, end === -1 ? undefined : end);
    const candidates = [...(this.byFirstSegment.get(first) ?? []), ...this.fromAnyFirstSegment];
    const onPath = candidates.filter((route) => route.pattern.test(pathname));
    if (onPath.length === 0) return { kind: 'not-found' };
    const wanted = method === 'HEAD' ? 'GET' : method;
    const route = onPath.find((candidate) => candidate.method === wanted);
    if (!route) return { kind: 'method-not-allowed', allow: allowedMethods(onPath) };
    const values = route.pattern.exec(pathname)?.slice(1) ?? [];
    const params = Object.fromEntries(
      route.paramNames.map((name, i) => [name, decodeSegment(values[i] ?? '')]),
    );
    return { kind: 'found', route, params };
  }

  /**
   * Runs a matched route: checks the token's scope (anything but GET writes) and the path parameters,
   * reads the body, maps errors to problem details.
   * The handler runs in the environment's transaction (inRequestTransaction), and every POST honours an
   * Idempotency-Key header inside it (see IdempotencyService).
   */
  async handle(
    route: CompiledRoute,
    params: Record<string, string>,
    request: Request,
    ctx: RequestContext,
  ): Promise<Response> {
    const instance = new URL(request.url).pathname;
    try {
      if (route.method !== 'GET' && !grantsScope(ctx.token, 'write')) {
        throw missingScope(ctx.token, 'write', `${route.method} ${route.path}`);
      }
      const badParams = route.paramNames.filter((name) => !isUuid(params[name] ?? ''));
      if (badParams.length > 0) {
        throw DomainError.invalidInput(
          badParams.map((name) => ({ path: [name], message: 'must be a UUID' })),
        );
      }
      const { alternatives } = route.response;
      const mediaType = route.mediaTypes ? negotiate(request, route.mediaTypes) : JSON_MEDIA_TYPE;
      if (!mediaType) return notAcceptableResponse(instance, route.mediaTypes ?? [JSON_MEDIA_TYPE]);
      // UUIDs are case-insensitive (RFC 9562); ids are stored, cached and compared in lowercase.
      const ids = Object.fromEntries(Object.entries(params).map(([name, id]) => [name, id.toLowerCase()]));
      const key = route.method === 'POST' ? idempotencyKeyOf(request) : undefined;
      const body = METHODS_WITH_BODY.has(route.method) ? await readJsonBody(request) : undefined;
      assertStorableInput(body);
      setAuditContext(ctx.em, { operation: `${route.method} ${route.path}` });
      const respond = async (context: RequestContext) => {
        const result = await route.handler({ ctx: context, params: ids, body, request, mediaType });
        const vary: Record<string, string> = alternatives ? { vary: 'accept' } : {};
        if ('stream' in result) {
          if (route.method !== 'GET') throw new Error(`${route.path}: only a GET may stream its answer`);
          const body = streamInTransaction(ctx, result.stream);
          return { status: result.status, headers: { ...vary, ...result.headers }, body };
        }
        if (result.body instanceof Uint8Array) {
          // Handlers build bytes in Node Buffers, which are backed by a plain ArrayBuffer.
          const bytes = result.body as Uint8Array<ArrayBuffer>;
          return { status: result.status, headers: { ...vary, ...result.headers }, body: bytes };
        }
        return {
          status: result.status,
          headers: { 'content-type': 'application/json; charset=utf-8', ...vary, ...result.headers },
          body: result.status === 204 ? null : JSON.stringify(result.body),
        };
      };
      const replayable = async (context: RequestContext): Promise<ReplayableResponse> => {
        const response = await respond(context);
        if (response.body instanceof Uint8Array || response.body instanceof ReadableStream)
          throw new Error(`${route.path}: a POST answers JSON, replays store text`);
        return { ...response, body: response.body };
      };
      const readOnly = route.method === 'GET';
      const response = await inRequestTransaction(
        ctx,
        (tx) =>
          withinDeadline(this.timeoutMs, async () =>
            key
              ? new IdempotencyService(tx).run(key, requestFingerprint(`POST ${instance}`, body), replayable)
              : { ...(await respond(tx)), replayed: false },
          ),
        // A REST request is one atomic unit: any failure answers an error and rolls all of it back.
        { readOnly, atomic: true },
      ).finally(async () => {
        if (!readOnly) await afterWrite(ctx, this.logFenceFailure);
      });
      return new Response(response.body, {
        status: response.status,
        headers: response.replayed
          ? { ...response.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' }
          : response.headers,
      });
    } catch (error) {
      if (error instanceof BodyError) {
        const { title, code } = BODY_ERROR_CODES[error.status];
        return problemResponse({
          title,
          status: error.status,
          code,
          detail: error.message,
          instance,
        });
      }
      const { problem, headers } = errorToProblem(error, instance);
      if (problem.status >= 500) this.logger.error({ err: error, path: instance }, 'request failed');
      return problemResponse(problem, headers);
    }
  }
}

/**
 * The media type of `available` the Accept header ranks highest (by q, then specificity, then its
 * own order; the earlier of `available` for a wildcard), or undefined when it allows none.
 */
function negotiate(request: Request, available: string[]): string | undefined {
  const accept = request.headers.get('accept');
  let choices = negotiated.get(available);
  if (!choices) {
    choices = new Map();
    negotiated.set(available, choices);
  }
  const key = accept ?? '';
  if (choices.has(key)) return choices.get(key);
  const chosen = new Negotiator({ headers: accept === null ? {} : { accept } }).mediaType(available);
  // Clients send a handful of distinct Accept headers; a bound keeps arbitrary ones from growing it.
  if (choices.size >= NEGOTIATED_PER_ROUTE) choices.clear();
  choices.set(key, chosen);
  return chosen;
}

/** The media type each Accept header chose, per list of available types (a route's: the same array each time). */
const negotiated = new WeakMap<string[], Map<string, string | undefined>>();
const NEGOTIATED_PER_ROUTE = 100;

function notAcceptableResponse(instance: string, available: string[]): Response {
  return problemResponse({
    title: 'Not acceptable',
    status: 406,
    code: 'NOT_ACCEPTABLE',
    detail: `The Accept header allows none of the media types this operation answers with: ${available.join(', ')}.`,
    instance,
  });
}

/** The methods a path answers, HEAD wherever GET is. */
function allowedMethods(routes: CompiledRoute[]): string[] {
  const methods = routes.map((route) => route.method as string);
  return methods.includes('GET') ? [...methods, 'HEAD'] : methods;
}

/**
 * The answer to a HEAD: the GET's status and headers without its body. A streamed body is cancelled,
 * which ends the transaction producing it.
 */
export async function withoutBody(response: Response): Promise<Response> {
  await response.body?.cancel();
  return new Response(null, { status: response.status, headers: response.headers });
}

/** A percent-decoded path segment; a malformed escape (`%zz`) stays as sent and fails the UUID check. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function notFoundResponse(request: Request): Response {
  const { pathname } = new URL(request.url);
  return problemResponse({
    title: 'Not found',
    status: 404,
    code: 'NOT_FOUND',
    detail: `No resource is served at ${request.method} ${pathname}.`,
    instance: pathname,
  });
}

export function methodNotAllowedResponse(request: Request, allow: string[]): Response {
  const { pathname } = new URL(request.url);
  return problemResponse(
    {
      title: 'Method not allowed',
      status: 405,
      code: 'METHOD_NOT_ALLOWED',
      detail: `${request.method} is not allowed on ${pathname}; allowed: ${allow.join(', ')}.`,
      instance: pathname,
    },
    { allow: allow.join(', ') },
  );
}
