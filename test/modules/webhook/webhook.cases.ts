import { byId, type ModuleCases, page } from '../../support/cases.ts';

/** The webhook module's operations in the isolation matrix. */
export const cases: ModuleCases = {
  isolation: {
    graphql: {
      'Query.webhookEndpoints': [{ args: page }],
      'Query.webhookEndpoint': [byId('webhookEndpoint')],
      'Mutation.webhookEndpointUpdate': [
        { target: 'webhookEndpoint', args: (id) => ({ id, input: { description: 'Renamed' } }) },
      ],
      'Mutation.webhookEndpointDisable': [byId('webhookEndpoint')],
      'Mutation.webhookEndpointEnable': [byId('webhookEndpoint')],
      'Mutation.webhookEndpointRotateSecret': [byId('webhookEndpoint')],
      'Mutation.webhookEndpointSendTest': [byId('webhookEndpoint')],
      'Mutation.webhookDeliveryResend': [byId('webhookDelivery')],
    },
  },
};
