import { lexicographicSortSchema } from 'graphql';
import { builder } from './builder.ts';
import '../modules/customer/customer.graphql.ts';
import '../modules/invoice/invoice.graphql.ts';

export const schema = lexicographicSortSchema(builder.toSchema());
