import { AUDIT_ACTIONS, type AuditEvent } from '../../audit/audit-event.entity.ts';
import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { AuditService } from './audit.service.ts';

const AuditActionEnum = builder.enumType('AuditAction', {
  description: 'What a write did to its object.',
  values: describedValues(AUDIT_ACTIONS, {
    create: 'The object was created.',
    update: 'Fields of the object changed.',
    delete: 'The object was deleted.',
  }),
});

const AuditEventRef = builder.objectRef<AuditEvent>('AuditEvent').implement({
  description: 'One write to one object of the environment, recorded in the same transaction as the write.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    occurredAt: t.expose('occurredAt', {
      type: 'DateTime',
      description: 'When the write committed (ISO 8601, UTC).',
    }),
    action: t.expose('action', { type: AuditActionEnum, description: 'What the write did.' }),
    objectType: t.exposeString('objectType', { description: 'The kind of object, e.g. Customer.' }),
    objectId: t.exposeString('objectId', { description: 'The id of the object written.' }),
    operation: t.exposeString('operation', {
      nullable: true,
      description:
        'The API operation that wrote it: a mutation field (customerCreate) or a REST route ' +
        '(PATCH /customers/{customerId}); null for the server’s own jobs.',
    }),
    tokenId: t.expose('tokenId', {
      type: 'UUID',
      nullable: true,
      description:
        'The API token that wrote it (see `npm run cli -- token list`); null for the server’s own jobs.',
    }),
    changedFields: t.exposeStringList('changedFields', {
      description: 'For updates, the fields written; empty for creates and deletes.',
    }),
  }),
});

builder.queryFields((t) => ({
  auditEvents: t.connection(
    {
      type: AuditEventRef,
      description: 'The audit trail of this environment, oldest first.',
      args: { objectId: t.arg({ type: 'UUID', description: 'Only the events about this object.' }) },
      resolve: (_root, { objectId, ...page }, ctx) => new AuditService(ctx).list({ objectId }, page),
    },
    { name: 'AuditEventConnection' },
    { name: 'AuditEventEdge' },
  ),
}));
