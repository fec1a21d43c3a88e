import { randomUUID } from 'node:crypto';
import { USAGE_AT } from '../../security/fixtures.ts';
import { byId, type ModuleCases, page } from '../../support/cases.ts';

/**
 * The metering module's operations in the isolation matrix. Ingestion answers every event on its own
 * (a foreign customer is a rejected event, not a refused request), so its cases name nothing and must
 * work; test/metering/ingestion.test.ts shows another environment's customers and metrics are unknown.
 */
export const cases: ModuleCases = {
  isolation: {
    rest: {
      'POST /events': [
        {
          request: (_ref, own) => ({
            path: '/events',
            body: {
              events: [
                { transactionId: randomUUID(), customer: own.customer, metric: 'none', timestamp: USAGE_AT },
              ],
            },
          }),
        },
      ],
    },
    graphql: {
      'Query.meteringSettings': [{ args: () => ({}) }],
      'Mutation.meteringSettingsUpdate': [{ args: () => ({ input: { lateEvents: 'adjust_next' } }) }],
      'Query.billableMetric': [byId('billableMetric')],
      'Query.billableMetrics': [{ args: page }],
      'Query.subscriptionItemUsage': [
        { target: 'usageItem', args: (id) => ({ subscriptionItemId: id, at: USAGE_AT }) },
      ],
      'Mutation.billableMetricCreate': [
        { args: () => ({ input: { code: `m-${randomUUID()}`, name: 'Matrix', aggregation: 'count' } }) },
      ],
      'Mutation.billableMetricUpdate': [
        { target: 'billableMetric', args: (id) => ({ id, input: { name: 'Renamed' } }) },
      ],
      'Mutation.usageThresholdCreate': [
        {
          target: 'meteredItem',
          args: (id) => ({ input: { subscriptionItemId: id, kind: 'usage', value: 5 } }),
        },
      ],
      'Mutation.usageEventsIngest': [
        {
          args: (_ref, own) => ({
            events: [
              { transactionId: randomUUID(), customer: own.customer, metric: 'none', timestamp: USAGE_AT },
            ],
          }),
        },
      ],
    },
  },
  fuzz: {
    bodies: {
      'POST /events': (fixtures) => ({
        events: [
          {
            transactionId: randomUUID(),
            customer: fixtures.customerId,
            metric: 'calls',
            timestamp: '2026-01-10T00:00:00Z',
            properties: { region: 'eu' },
          },
        ],
      }),
    },
  },
};
