import { Response } from '@whatwg-node/fetch';
import { validate as isUuid } from 'uuid';
import type { z } from 'zod';
import type { RequestContext } from '../context.ts';
import { DomainError } from '../errors.ts';
import {
  IDEMPOTENT_REPLAYED_HEADER,
  IdempotencyService,
  idempotencyKeyOf,
  type ReplayableResponse,
  requestFingerprint,
} from '../idempotency/idempotency.service.ts';
import type { Logger } from '../logger.ts';
import { setAuditContext } from '../modules/audit/audit.context.ts';
import { BodyError, readJsonBody } from './body.ts';
import { errorToProblem, problemResponse } from './problem.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type RestRequest = {
  ctx: RequestContext;
  params: Record<string, string>;
  /** The parsed JSON body (undefined for methods without one). */
  body: unknown;
  request: Request;
};

export type RestResult = { status: number; body: unknown; headers?: Record<string, string> };

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
  response: { status: number; description: string; schema: z.ZodType };
  handler: (req: RestRequest) => Promise<RestResult>;
};

type CompiledRoute = Route & { pattern: RegExp; paramNames: string[] };

export type RouteMatch =
  | { kind: 'found'; route: CompiledRoute; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allow: string[] }
  | { kind: 'not-found' };

const METHODS_WITH_BODY = new Set<string>(['POST', 'PUT', 'PATCH']);

export class RestRouter {
  private readonly routes: CompiledRoute[];
  private readonly logger: Logger;

  constructor(routes: Route[], logger: Logger) {
    this.logger = logger;
    this.routes = routes.map((route) => {
      const paramNames = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
      const source = route.path.replace(/\{\w+\}/g, '([^/]+)');
      return { ...route, paramNames, pattern: new RegExp(`^${source}/?$`) };
    });
  }

  match(method: string, pathname: string): RouteMatch {
    const onPath = this.routes.filter((route) => route.pattern.test(pathname));
    if (onPath.length === 0) return { kind: 'not-found' };
    const route = onPath.find((candidate) => candidate.method === method);
    if (!route) return { kind: 'method-not-allowed', allow: onPath.map((candidate) => candidate.method) };
    const values = route.pattern.exec(pathname)?.slice(1) ?? [];
    const params = Object.fromEntries(
      route.paramNames.map((name, i) => [name, decodeURIComponent(values[i] ?? '')]),
    );
    return { kind: 'found', route, params };
  }

  /**
   * Runs a matched route: checks path parameters, reads the body, maps errors to problem details.
   * Every POST honours an Idempotency-Key header (see IdempotencyService).
   */
  async handle(
    route: CompiledRoute,
    params: Record<string, string>,
    request: Request,
    ctx: RequestContext,
  ): Promise<Response> {
    const instance = new URL(request.url).pathname;
    try {
      const badParams = route.paramNames.filter((name) => !isUuid(params[name] ?? ''));
      if (badParams.length > 0) {
        throw DomainError.invalidInput(
          badParams.map((name) => ({ path: [name], message: 'must be a UUID' })),
        );
      }
      const key = route.method === 'POST' ? idempotencyKeyOf(request) : undefined;
      const body = METHODS_WITH_BODY.has(route.method) ? await readJsonBody(request) : undefined;
      setAuditContext(ctx.em, { operation: `${route.method} ${route.path}` });
      const respond = async (context: RequestContext): Promise<ReplayableResponse> => {
        const result = await route.handler({ ctx: context, params, body, request });
        return {
          status: result.status,
          headers: { 'content-type': 'application/json; charset=utf-8', ...result.headers },
          body: result.status === 204 ? null : JSON.stringify(result.body),
        };
      };
      const response = key
        ? await new IdempotencyService(ctx).run(key, requestFingerprint(`POST ${instance}`, body), respond)
        : { ...(await respond(ctx)), replayed: false };
      return new Response(response.body, {
        status: response.status,
        headers: response.replayed
          ? { ...response.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' }
          : response.headers,
      });
    } catch (error) {
      if (error instanceof BodyError) {
        const titles = { 400: 'Malformed JSON', 413: 'Payload too large', 415: 'Unsupported media type' };
        return problemResponse({
          title: titles[error.status],
          status: error.status,
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

export function notFoundResponse(request: Request): Response {
  const { pathname } = new URL(request.url);
  return problemResponse({
    title: 'Not found',
    status: 404,
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
      detail: `${request.method} is not allowed on ${pathname}; allowed: ${allow.join(', ')}.`,
      instance: pathname,
    },
    { allow: allow.join(', ') },
  );
}
