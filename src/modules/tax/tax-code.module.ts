import './tax-code.graphql.ts';
import type { BillingModule } from '../module.ts';
import { TaxCodeSchema } from './tax-code.entity.ts';

export const taxModule: BillingModule = {
  name: 'tax',
  entities: [TaxCodeSchema],
  routes: [],
};
