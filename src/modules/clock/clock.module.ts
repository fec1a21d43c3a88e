import './clock.graphql.ts';
import type { BillingModule } from '../module.ts';
import { TestClockSchema } from './clock.entity.ts';
import { clockTasks } from './clock.jobs.ts';

/** Test clocks: simulated time for the customers of a test environment. */
export const clockModule: BillingModule = {
  name: 'clock',
  entities: [TestClockSchema],
  routes: [],
  tasks: clockTasks,
};
