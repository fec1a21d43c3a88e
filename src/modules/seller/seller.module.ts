import './seller.graphql.ts';
import type { BillingModule } from '../module.ts';
import { SellerLogoSchema, SellerProfileSchema } from './seller.entity.ts';

/** Who the environment invoices as: the seller named on its invoices and e-invoices. */
export const sellerModule: BillingModule = {
  name: 'seller',
  entities: [SellerProfileSchema, SellerLogoSchema],
  routes: [],
};
