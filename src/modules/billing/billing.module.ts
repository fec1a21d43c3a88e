import './billing.graphql.ts';
import type { BillingModule } from '../module.ts';
import { billingTasks } from './billing.jobs.ts';
import { BilledPeriodSchema, BillingRunSchema } from './billing-run.entity.ts';

export const billingModule: BillingModule = {
  name: 'billing',
  entities: [BillingRunSchema, BilledPeriodSchema],
  routes: [],
  tasks: billingTasks,
};
