import { Response } from '@whatwg-node/fetch';
import type { Plugin } from 'graphql-yoga';

/** What a page of an allowed origin may send and read; the API's credentials travel in headers, never cookies. */
const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE';
const ALLOWED_HEADERS = 'authorization, content-type, accept, x-environment, idempotency-key, x-request-id';
const EXPOSED_HEADERS = 'x-request-id, retry-after, idempotent-replayed, www-authenticate';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * CORS for an allowlist of exact origins (none by default: no browser page of another origin may read an
 * answer). Yoga's own CORS would echo any origin and allow credentials; this never answers `*`, never allows
 * credentials (none are cookies), and gives a page of any other origin no CORS header at all, `null`
 * included, which sandboxed frames send.
 */
export function useCorsAllowlist(origins: readonly string[]): Plugin {
  const cors = corsAllowlist(origins);
  return {
    onRequest({ request, endResponse }) {
      const preflight = cors.preflight(request);
      if (preflight) endResponse(preflight);
    },
    onResponse({ request, response }) {
      cors.decorate(request, response);
    },
  };
}

/**
 * The allowlist's two halves: the answer to a preflight (`OPTIONS` with `Access-Control-Request-Method`),
 * and the headers every other answer gets (see useCorsAllowlist; the REST front in src/app.ts calls
 * `decorate` itself).
 */
export function corsAllowlist(origins: readonly string[]) {
  const allowed = new Set(origins);
  const allowedOrigin = (request: Request) => {
    const origin = request.headers.get('origin');
    return origin !== null && allowed.has(origin) ? origin : undefined;
  };
  const isPreflight = (request: Request) =>
    request.method === 'OPTIONS' && request.headers.has('access-control-request-method');
  return {
    isPreflight,
    preflight(request: Request): Response | undefined {
      if (!isPreflight(request)) return undefined;
      const origin = allowedOrigin(request);
      const headers: Record<string, string> = { 'content-length': '0', vary: 'Origin' };
      if (origin) {
        Object.assign(headers, {
          'access-control-allow-origin': origin,
          'access-control-allow-methods': ALLOWED_METHODS,
          'access-control-allow-headers': ALLOWED_HEADERS,
          'access-control-max-age': PREFLIGHT_MAX_AGE_SECONDS,
        });
      }
      return new Response(null, { status: 204, headers });
    },
    decorate(request: Request, response: Response): void {
      if (allowed.size === 0 || request.method === 'OPTIONS') return;
      // The answer differs by origin, so a cache must not hand one origin's answer to another.
      response.headers.append('vary', 'Origin');
      const origin = allowedOrigin(request);
      if (!origin) return;
      response.headers.set('access-control-allow-origin', origin);
      response.headers.set('access-control-expose-headers', EXPOSED_HEADERS);
    },
  };
}
