import type { LoaderSet } from '../../context.ts';
import { leanById } from '../../db/loaders.ts';
import { CustomerSchema } from './customer.entity.ts';

/** The customer module's batched reads, built once per request (RequestLoaders): read-only rows of this environment. */
export const customerLoaders = ((em, environmentId) => ({
  byId: leanById(em, environmentId, CustomerSchema),
})) satisfies LoaderSet<unknown>;
