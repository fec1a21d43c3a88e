import { customerRoutes } from '../modules/customer/customer.rest.ts';
import { invoiceRoutes } from '../modules/invoice/invoice.rest.ts';
import { ledgerRoutes } from '../modules/ledger/ledger.rest.ts';
import { priceRoutes } from '../modules/price/price.rest.ts';
import { productRoutes } from '../modules/product/product.rest.ts';
import { subscriptionRoutes } from '../modules/subscription/subscription.rest.ts';
import type { Route } from './router.ts';

/** Every documented REST operation. */
export const routes: Route[] = [
  ...customerRoutes,
  ...productRoutes,
  ...priceRoutes,
  ...ledgerRoutes,
  ...invoiceRoutes,
  ...subscriptionRoutes,
];
