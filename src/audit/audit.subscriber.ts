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
      if (
        !action ||
        typeof environmentId !== 'string' ||
        changeSet.meta.className === AuditEventSchema.meta.className
      ) {
        continue;
      }
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
