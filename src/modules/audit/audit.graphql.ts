import { AUDIT_ACTIONS, type AuditEvent } from '../../audit/audit-event.entity.ts';
import { builder } from '../../graphql/builder.ts';
import { AuditService } from './audit.service.ts';

const AuditActionEnum = builder.enumType('AuditAction', {
  values: AUDIT_ACTIONS,
});

const AuditEventRef = builder.objectRef<AuditEvent>('AuditEvent').implement({
  description: 'One write to one object of the environment, recorded in the same transaction as the write.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    occurredAt: t.expose('occurredAt', { type: 'DateTime' }),
    action: t.expose('action', { type: AuditActionEnum }),
    objectType: t.exposeString('objectType', { description: 'The kind of object, e.g. Customer.' }),
    objectId: t.exposeString('objectId'),
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
