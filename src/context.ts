import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiToken } from './auth/api-token.entity.ts';
import { Loaders } from './loaders.ts';

/** Everything a service needs to act for one request inside one environment. */
export type RequestContext = {
  em: EntityManager;
  environmentId: string;
  token: ApiToken;
  loaders: Loaders;
};

export function createRequestContext(
  em: EntityManager,
  environmentId: string,
  token: ApiToken,
): RequestContext {
  return { em, environmentId, token, loaders: new Loaders(em, environmentId) };
}
