import './price.graphql.ts';
import './price-pricing.graphql.ts';
import type { BillingModule } from '../module.ts';
import { PriceSchema } from './price.entity.ts';
import { priceRoutes } from './price.rest.ts';

export const priceModule: BillingModule = {
  name: 'price',
  entities: [PriceSchema],
  routes: priceRoutes,
};
