import './product.graphql.ts';
import type { BillingModule } from '../module.ts';
import { ProductSchema } from './product.entity.ts';
import { productRoutes } from './product.rest.ts';

export const productModule: BillingModule = {
  name: 'product',
  entities: [ProductSchema],
  routes: productRoutes,
};
