import { lexicographicSortSchema } from 'graphql';
// The registry's modules register their GraphQL types with the builder as they load.
import '../modules/registry.ts';
import { builder } from './builder.ts';

export const schema = lexicographicSortSchema(builder.toSchema());
