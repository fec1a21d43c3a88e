import './subscription.graphql.ts';
import type { BillingModule } from '../module.ts';
import {
  ProrationLineSchema,
  SubscriptionChangeSchema,
  SubscriptionItemSchema,
  SubscriptionSchema,
  UsageRecordSchema,
} from './subscription.entity.ts';
import { subscriptionRoutes } from './subscription.rest.ts';

export const subscriptionModule: BillingModule = {
  name: 'subscription',
  entities: [
    SubscriptionSchema,
    SubscriptionItemSchema,
    UsageRecordSchema,
    SubscriptionChangeSchema,
    ProrationLineSchema,
  ],
  routes: subscriptionRoutes,
};
