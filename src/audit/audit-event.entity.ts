import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { tenantKeys } from '../db/tenant-keys.ts';

export const AUDIT_ACTIONS = ['create', 'update', 'delete'] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** One write to one object of an environment: who (token), through what (operation), when. */
export const AuditEventSchema = defineEntity({
  name: 'AuditEvent',
  tableName: 'audit_event',
  properties: {
    ...tenantKeys(),
    tokenId: p.uuid().nullable(),
    operation: p.string().length(200).nullable(),
    action: p.enum(AUDIT_ACTIONS).columnType('varchar(10)'),
    objectType: p.string().length(100),
    objectId: p.string().length(100),
    changedFields: p.array().columnType('text[]'),
    occurredAt: p.datetime(),
  },
});

export type AuditEvent = InferEntity<typeof AuditEventSchema>;
