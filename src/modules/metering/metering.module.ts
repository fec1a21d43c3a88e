import './metering.graphql.ts';
import type { BillingModule } from '../module.ts';
import {
  BillableMetricSchema,
  MeteringSettingsSchema,
  UsageAdjustmentSchema,
  UsageThresholdSchema,
} from './metering.entity.ts';
import { meteringTasks } from './metering.jobs.ts';
import { meteringRoutes } from './metering.rest.ts';

export const meteringModule: BillingModule = {
  name: 'metering',
  entities: [BillableMetricSchema, MeteringSettingsSchema, UsageAdjustmentSchema, UsageThresholdSchema],
  routes: meteringRoutes,
  tasks: meteringTasks,
};
