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

/** What services that also serve the server's own jobs act with: there is no token then. */
export type ServiceContext = Omit<RequestContext, 'token'>;

export function createRequestContext(
  em: EntityManager,
  environmentId: string,
  token: ApiToken,
): RequestContext {
  setAuditContext(em, { tokenId: token.id });
  return { em, environmentId, token, loaders: new Loaders(em, environmentId) };
}

/** A context for a job of the server itself; `operation` names the job in the audit trail. */
export function createJobContext(
  em: EntityManager,
  environmentId: string,
  operation: string,
): ServiceContext {
  setAuditContext(em, { operation });
  return { em, environmentId, loaders: new Loaders(em, environmentId) };
}
