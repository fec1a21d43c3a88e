import type { LoaderSet } from '../../context.ts';
import { leanById } from '../../db/loaders.ts';
import { PriceSchema } from './price.entity.ts';

/** The price module's batched reads, built once per request (RequestLoaders): read-only rows of this environment. */
export const priceLoaders = ((em, environmentId) => ({
  byId: leanById(em, environmentId, PriceSchema),
})) satisfies LoaderSet<unknown>;
