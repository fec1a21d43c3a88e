import './customer.graphql.ts';
import type { BillingModule } from '../module.ts';
import { CustomerSchema } from './customer.entity.ts';
import { customerRoutes } from './customer.rest.ts';

export const customerModule: BillingModule = {
  name: 'customer',
  entities: [CustomerSchema],
  routes: customerRoutes,
};
