import { SUBSCRIPTION_START, USAGE_AT } from '../../security/fixtures.ts';
import { byId, type ModuleCases, page } from '../../support/cases.ts';

const subscriptionInput = (customerId: string, productId: string, priceId: string) => ({
  customerId,
  term: { start: SUBSCRIPTION_START },
  items: [{ productId, priceId }],
});

/** The subscription module's operations in the isolation matrix and the REST fuzzer. */
export const cases: ModuleCases = {
  isolation: {
    rest: {
      'GET /subscriptions': [{ request: () => ({ path: '/subscriptions?limit=100' }) }],
      'GET /subscriptions/{subscriptionId}': [
        { target: 'subscription', request: (id) => ({ path: `/subscriptions/${id}` }) },
      ],
    },
    graphql: {
      'Query.subscription': [byId('subscription')],
      'Query.subscriptions': [
        { args: page },
        { target: 'customer', args: (id) => ({ filter: { customerId: id }, first: 20 }) },
      ],
      'Mutation.subscriptionCancel': [byId('subscription')],
      'Mutation.subscriptionScheduledChangeCancel': [byId('scheduledChange')],
      'Mutation.subscriptionCreate': [
        { target: 'customer', args: (id, own) => ({ input: subscriptionInput(id, own.product, own.price) }) },
        { target: 'product', args: (id, own) => ({ input: subscriptionInput(own.customer, id, own.price) }) },
        { target: 'price', args: (id, own) => ({ input: subscriptionInput(own.customer, own.product, id) }) },
      ],
      'Mutation.subscriptionUpdate': [
        { target: 'subscription', args: (id) => ({ id, input: { autoRenewal: false } }) },
        {
          target: 'subscriptionItem',
          args: (id, own) => ({ id: own.subscription, input: { items: [{ id, quantity: 2 }] } }),
        },
        {
          target: 'subscriptionItem',
          args: (id, own) => ({ id: own.subscription, input: { removeItemIds: [id] } }),
        },
        {
          target: 'product',
          args: (id, own) => ({
            id: own.subscription,
            input: { addItems: [{ productId: id, priceId: own.price }] },
          }),
        },
        {
          target: 'price',
          args: (id, own) => ({
            id: own.subscription,
            input: { addItems: [{ productId: own.product, priceId: id }] },
          }),
        },
      ],
      'Mutation.usageRecord': [
        {
          target: 'usageItem',
          args: (id) => ({
            subscriptionItemId: id,
            quantity: 1,
            timestamp: USAGE_AT,
            idempotencyKey: 'matrix-usage',
          }),
        },
      ],
    },
  },
  fuzz: {
    existingIds: { subscriptionId: (fixtures) => fixtures.subscriptionId },
  },
};
