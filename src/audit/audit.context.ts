import type { EntityManager } from '@mikro-orm/core';

/** Who writes (the API token; none for the server's own jobs) and through which API operation. */
export type AuditContext = { tokenId?: string; operation?: string };

/**
 * Records the actor on an EntityManager. It travels in the logger context because every fork inherits
 * that, the transactional forks MikroORM makes inside `em.transactional()` included, so the audit
 * subscriber sees it whichever fork is flushed (and query logs carry it too).
 */
export function setAuditContext(em: EntityManager, context: AuditContext): void {
  em.setLoggerContext({ ...em.getLoggerContext(), ...context });
}

export function auditContextOf(em: EntityManager): AuditContext {
  const { tokenId, operation } = em.getLoggerContext<AuditContext>();
  return { tokenId, operation };
}
