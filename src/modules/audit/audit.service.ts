import { type AuditEvent, AuditEventSchema } from '../../audit/audit-event.entity.ts';
import type { RequestContext } from '../../context.ts';
import { type Connection, keysetPage, type PageArgs } from '../../db/pagination.ts';

/** Reading the audit trail of one environment (it is written by the AuditSubscriber, never here). */
export class AuditService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  /** Events oldest first, optionally only those about one object. */
  list(filter: { objectId?: string | null }, page: PageArgs): Promise<Connection<AuditEvent>> {
    return keysetPage(
      this.ctx.em,
      AuditEventSchema,
      {
        environmentId: this.ctx.environmentId,
        ...(filter.objectId ? { objectId: filter.objectId.toLowerCase() } : {}),
      },
      page,
    );
  }
}
