import { customerRoutes } from '../modules/customer/customer.rest.ts';
import { invoiceRoutes } from '../modules/invoice/invoice.rest.ts';
import type { Route } from './router.ts';

/** Every documented REST operation. */
export const routes: Route[] = [...customerRoutes, ...invoiceRoutes];
