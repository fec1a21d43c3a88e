import './event.graphql.ts';
import type { BillingModule } from '../module.ts';
import { EventSchema } from './event.entity.ts';
import { eventTasks } from './event.jobs.ts';

export const eventModule: BillingModule = {
  name: 'event',
  entities: [EventSchema],
  routes: [],
  tasks: eventTasks,
};
