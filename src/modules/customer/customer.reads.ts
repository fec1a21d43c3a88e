import type DataLoader from 'dataloader';
import type { LoaderSet } from '../../context.ts';
import { type JsonShape, jsonShape } from '../../db/lean.ts';
import { leanById, leanByIdAs } from '../../db/loaders.ts';
import { type Customer, CustomerSchema } from './customer.entity.ts';

/** The customer module's batched reads, built once per request (RequestLoaders): read-only rows of this environment. */
export const customerLoaders = ((em, environmentId) => {
  const byId = leanById(em, environmentId, CustomerSchema);
  const narrowed = new Map<JsonShape<Customer>, DataLoader<string, Readonly<Customer> | null>>();
  return {
    byId,
    /**
     * By id, reading only `properties` (and id and environmentId; see jsonShape's `only`): one loader
     * per set of columns, so that several reads of the same selection still go in one statement. Its
     * rows are for the selection that named the properties, never for byId's users. byId itself when
     * `properties` is null (read everything) or names every column.
     */
    byIdReading: (properties: ReadonlySet<string> | null): DataLoader<string, Readonly<Customer> | null> => {
      const whole = jsonShape(em, CustomerSchema);
      const shape = whole.only(properties);
      if (shape === whole) return byId;
      let loader = narrowed.get(shape);
      if (!loader) {
        loader = leanByIdAs(em, environmentId, CustomerSchema, shape);
        narrowed.set(shape, loader);
      }
      return loader;
    },
  };
}) satisfies LoaderSet<unknown>;
