import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiToken } from './auth/api-token.entity.ts';
import { Loaders } from './loaders.ts';
import { setAuditContext } from './modules/audit/audit.context.ts';

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
  setAuditContext(em, { tokenId: token.id });
  return { em, environmentId, token, loaders: new Loaders(em, environmentId) };
}
