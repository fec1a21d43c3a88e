import './audit.graphql.ts';
import { AuditEventSchema } from '../../audit/audit-event.entity.ts';
import type { BillingModule } from '../module.ts';

export const auditModule: BillingModule = {
  name: 'audit',
  entities: [AuditEventSchema],
  routes: [],
};
