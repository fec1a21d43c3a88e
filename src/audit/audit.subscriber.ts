import { ChangeSetType, type EventSubscriber, type FlushEventArgs } from '@mikro-orm/core';
import { auditContextOf } from './audit.context.ts';
import { type AuditAction, AuditEventSchema } from './audit-event.entity.ts';

const ACTIONS: Partial<Record<ChangeSetType, AuditAction>> = {
  [ChangeSetType.CREATE]: 'create',
  [ChangeSetType.UPDATE]: 'update',
  [ChangeSetType.UPDATE_EARLY]: 'update',
  [ChangeSetType.DELETE]: 'delete',
  [ChangeSetType.DELETE_EARLY]: 'delete',
};

/** Entities that are records of what happened themselves: auditing them would only repeat them. */
const unaudited = new Set<string>([AuditEventSchema.meta.className]);

/** Leaves an entity out of the audit trail (an append-only log of its own, such as events). */
export function excludeFromAudit(schema: { meta: { className: string } }): void {
  unaudited.add(schema.meta.className);
}

/**
 * Writes an audit event for every change of a tenant object (any entity with an `environmentId`) that
 * goes through the unit of work. It runs on flush, so modules are covered without calling it, and its
 * rows join the flush's own transaction: a write and its audit event commit or fail together.
 */
export class AuditSubscriber implements EventSubscriber {
  onFlush({ em, uow }: FlushEventArgs): void {
    const { tokenId, operation } = auditContextOf(em);
    const occurredAt = new Date();
    for (const changeSet of uow.getChangeSets()) {
      const action = ACTIONS[changeSet.type];
      const environmentId = (changeSet.entity as { environmentId?: unknown }).environmentId;
      if (!action || typeof environmentId !== 'string' || unaudited.has(changeSet.meta.className)) continue;
      const event = em.create(AuditEventSchema, {
        environmentId,
        tokenId: tokenId ?? null,
        operation: operation ?? null,
        action,
        objectType: changeSet.meta.className,
        objectId: changeSet.getSerializedPrimaryKey() ?? '',
        changedFields: action === 'update' ? Object.keys(changeSet.payload).sort() : [],
        occurredAt,
      });
      uow.computeChangeSet(event);
    }
  }
}
