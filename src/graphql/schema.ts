import { lexicographicSortSchema } from 'graphql';
import { builder } from './builder.ts';
import '../modules/audit/audit.graphql.ts';
import '../modules/customer/customer.graphql.ts';

export const schema = lexicographicSortSchema(builder.toSchema());
