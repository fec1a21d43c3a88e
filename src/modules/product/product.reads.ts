import type { LoaderSet } from '../../context.ts';
import { leanById } from '../../db/loaders.ts';
import { ProductSchema } from './product.entity.ts';

/** The product module's batched reads, built once per request (RequestLoaders): read-only rows of this environment. */
export const productLoaders = ((em, environmentId) => ({
  byId: leanById(em, environmentId, ProductSchema),
})) satisfies LoaderSet<unknown>;
