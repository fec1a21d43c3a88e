import type { LoaderSet } from '../../context.ts';
import { leanById, leanByParent } from '../../db/loaders.ts';
import {
  SubscriptionChangeSchema,
  SubscriptionItemSchema,
  SubscriptionSchema,
} from './subscription.entity.ts';

/** The subscription module's batched reads, built once per request (RequestLoaders): read-only rows of this environment. */
export const subscriptionLoaders = ((em, environmentId) => ({
  byId: leanById(em, environmentId, SubscriptionSchema),
  itemsBySubscriptionId: leanByParent(em, environmentId, SubscriptionItemSchema, 'subscriptionId'),
  /** Every change of the subscription's items, cancelled ones too, in the order they were made. */
  changesBySubscriptionId: leanByParent(em, environmentId, SubscriptionChangeSchema, 'subscriptionId'),
})) satisfies LoaderSet<unknown>;
