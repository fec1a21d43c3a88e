import { ChangeSetType, type EventSubscriber, type FlushEventArgs } from '@mikro-orm/core';
import { type AuditContext, auditContextOf } from './audit.context.ts';
import { type AuditAction, type AuditEvent, AuditEventSchema } from './audit-event.entity.ts';

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
    const context = auditContextOf(em);
    const occurredAt = new Date();
    for (const changeSet of uow.getChangeSets()) {
      const action = ACTIONS[changeSet.type];
      const environmentId = (changeSet.entity as { environmentId?: unknown }).environmentId;
      if (!action || typeof environmentId !== 'string' || unaudited.has(changeSet.meta.className)) continue;
      const event = em.create(
        AuditEventSchema,
        auditRow(context, occurredAt, {
          environmentId,
          action,
          objectType: changeSet.meta.className,
          objectId: changeSet.getSerializedPrimaryKey() ?? '',
          changedFields: action === 'update' ? Object.keys(changeSet.payload) : [],
        }),
      );
      uow.computeChangeSet(event);
    }
  }
}

/** One audited change of one object: what the unit of work's change set or a lean write says of it. */
export type AuditedChange = {
  environmentId: string;
  action: AuditAction;
  /** The entity's class name (`Invoice`), as the unit of work names it. */
  objectType: string;
  objectId: string;
  /** The properties an update set (any order); none for a create or delete. */
  changedFields: readonly string[];
};

/**
 * The audit event of a change, the same whichever path wrote it (the subscriber on a flush, or
 * writeChange for a write outside the unit of work): the actor from the request's audit context,
 * changed fields sorted.
 */
export function auditRow(
  { tokenId, operation }: AuditContext,
  occurredAt: Date,
  change: AuditedChange,
): Omit<AuditEvent, 'id'> {
  return {
    environmentId: change.environmentId,
    tokenId: tokenId ?? null,
    operation: operation ?? null,
    action: change.action,
    objectType: change.objectType,
    objectId: change.objectId,
    changedFields: [...change.changedFields].sort(),
    occurredAt,
  };
}

/** Whether changes to the entity are audited (every tenant entity but the logs excluded above). */
export function isAudited(schema: { meta: { className: string } }): boolean {
  return !unaudited.has(schema.meta.className);
}
