import { lexicographicSortSchema } from 'graphql';
import { builder } from './builder.ts';
import '../modules/audit/audit.graphql.ts';
import '../modules/billing/billing.graphql.ts';
import '../modules/customer/customer.graphql.ts';
import '../modules/environment/environment.graphql.ts';
import '../modules/invoice/invoice.graphql.ts';
import '../modules/ledger/ledger.graphql.ts';
import '../modules/price/price.graphql.ts';
import '../modules/product/product.graphql.ts';
import '../modules/subscription/subscription.graphql.ts';
import '../modules/tax/tax-code.graphql.ts';

export const schema = lexicographicSortSchema(builder.toSchema());
