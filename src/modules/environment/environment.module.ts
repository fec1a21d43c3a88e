import './environment.graphql.ts';
import type { BillingModule } from '../module.ts';

/** The environment a request acts in, as GraphQL shows it; its table belongs to authentication. */
export const environmentModule: BillingModule = {
  name: 'environment',
  entities: [],
  routes: [],
};
