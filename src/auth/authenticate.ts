import type { MikroORM } from '@mikro-orm/postgresql';
import { validate as isUuid } from 'uuid';
import { createRequestContext, type RequestContext } from '../context.ts';
import { problemResponse } from '../http/problem.ts';
import { AccessService } from './access.service.ts';
import type { TokenCache } from './token-cache.ts';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * Resolves the request's environment and token into a request context (with its own EntityManager
 * fork), or the problem response that refuses it: 400 for a bad `x-environment`, 401 for a missing,
 * unknown or revoked token, 403 for a token not granted that environment.
 */
export async function authenticate(
  orm: MikroORM,
  request: Request,
  tokenCache?: TokenCache,
): Promise<RequestContext | Response> {
  const instance = new URL(request.url).pathname;
  const environmentId = request.headers.get('x-environment')?.trim();
  if (!environmentId || !isUuid(environmentId)) {
    return problemResponse({
      title: 'Invalid environment header',
      status: 400,
      code: 'INVALID_ENVIRONMENT_HEADER',
      detail: environmentId
        ? 'The x-environment header must be a UUID.'
        : 'The x-environment header is required: it names the environment the request acts on.',
      instance,
    });
  }
  const secret = BEARER.exec(request.headers.get('authorization') ?? '')?.[1];
  const unauthenticated = (detail: string) =>
    problemResponse(
      { title: 'Unauthorized', status: 401, detail, instance, code: 'UNAUTHENTICATED' },
      { 'www-authenticate': 'Bearer realm="billing"' },
    );
  if (!secret) return unauthenticated('Send an API token as Authorization: Bearer <token>.');

  const em = orm.em.fork();
  const decision = await new AccessService(em).authorize(secret, environmentId.toLowerCase(), tokenCache);
  if (!decision.ok) {
    return decision.reason === 'unauthenticated'
      ? unauthenticated('The API token is unknown or has been revoked.')
      : problemResponse({
          title: 'Forbidden',
          status: 403,
          code: 'FORBIDDEN',
          detail: 'The API token is not granted access to this environment.',
          instance,
        });
  }
  return createRequestContext(em, decision.environmentId, decision.token);
}
