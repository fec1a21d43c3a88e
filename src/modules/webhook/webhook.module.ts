import './webhook.graphql.ts';
import type { BillingModule } from '../module.ts';
import { endpointListens, endpointsListen, WEBHOOK_FAN_OUT_TASK } from './webhook.dispatcher.ts';
import {
  WebhookDeliveryAttemptSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
} from './webhook.entity.ts';
import { webhookTasks } from './webhook.jobs.ts';

export const webhookModule: BillingModule = {
  name: 'webhook',
  entities: [WebhookEndpointSchema, WebhookDeliverySchema, WebhookDeliveryAttemptSchema],
  routes: [],
  tasks: webhookTasks,
  // An event no enabled endpoint of its environment wants fans out to nothing: it gets no fan-out job.
  eventListeners: [
    { task: WEBHOOK_FAN_OUT_TASK, types: 'all', wants: endpointListens, wantsAll: endpointsListen },
  ],
};
