import type { RequestContext } from '../../context.ts';
import { builder } from '../../graphql/builder.ts';
import { describedValues } from '../../graphql/enum-values.ts';
import { payloadType, UserErrorRef, withUserErrors } from '../../graphql/user-errors.ts';
import { EventTypeEnum } from '../event/event.graphql.ts';
import {
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_DISABLED_REASONS,
  WEBHOOK_ENDPOINT_STATUSES,
  type WebhookDelivery,
  type WebhookDeliveryAttempt,
  type WebhookEndpoint,
} from './webhook.entity.ts';
import {
  type EndpointWithSecret,
  WebhookEndpointCreateInput,
  WebhookEndpointUpdateInput,
  WebhookService,
} from './webhook.service.ts';

const service = (ctx: RequestContext) =>
  new WebhookService(ctx, { allowPrivateTargets: ctx.allowPrivateWebhookTargets ?? false });

const EndpointStatusEnum = builder.enumType('WebhookEndpointStatus', {
  values: describedValues(WEBHOOK_ENDPOINT_STATUSES, {
    enabled: 'Events are delivered to it.',
    disabled: 'Nothing is delivered to it (see disabledReason).',
  }),
  description: 'enabled: receives events; disabled: receives none (see disabledReason).',
});
const DisabledReasonEnum = builder.enumType('WebhookEndpointDisabledReason', {
  values: describedValues(WEBHOOK_DISABLED_REASONS, {
    manual: 'Disabled through the API.',
    failing: 'Disabled by the server after its deliveries kept failing.',
  }),
  description: 'manual: webhookEndpointDisable; failing: every attempt failed for WEBHOOK_RETRY_HOURS.',
});
const DeliveryStatusEnum = builder.enumType('WebhookDeliveryStatus', {
  values: describedValues(WEBHOOK_DELIVERY_STATUSES, {
    pending: 'Not delivered yet; it is retried at nextAttemptAt.',
    succeeded: 'The endpoint answered 2xx.',
    failed: 'Every attempt failed; no more are made.',
  }),
  description:
    'pending: not answered 2xx yet, retried; succeeded: answered 2xx; failed: retried for WEBHOOK_RETRY_HOURS ' +
    'in vain, or its endpoint was disabled.',
});

const AttemptRef = builder.objectRef<WebhookDeliveryAttempt>('WebhookDeliveryAttempt').implement({
  description: 'One HTTP request of a delivery and what came of it.',
  fields: (t) => ({
    number: t.exposeInt('number', { description: '1 for the first attempt.' }),
    startedAt: t.expose('startedAt', { type: 'DateTime', description: 'When it started (ISO 8601, UTC).' }),
    durationMs: t.exposeInt('durationMs', { description: 'How long the attempt took, in milliseconds.' }),
    statusCode: t.exposeInt('statusCode', {
      nullable: true,
      description: 'The HTTP status the endpoint answered; null when it did not answer (see error).',
    }),
    responseBody: t.exposeString('responseBody', {
      nullable: true,
      description: 'The start of the answer’s body (1,024 characters at most).',
    }),
    error: t.exposeString('error', { nullable: true, description: 'Why the attempt failed.' }),
  }),
});

const DeliveryRef = builder.objectRef<WebhookDelivery>('WebhookDelivery').implement({
  description:
    'One event on its way to one endpoint (or a test message), signed per Standard Webhooks: the header ' +
    '`webhook-id` is the event’s id (a test message’s: the delivery’s id).',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    endpointId: t.expose('endpointId', { type: 'UUID', description: 'The endpoint’s id.' }),
    eventId: t.expose('eventId', { type: 'UUID', nullable: true, description: 'Null for a test message.' }),
    eventType: t.exposeString('eventType', { description: 'The event’s type, or webhook.test.' }),
    resendOf: t.expose('resendOf', {
      type: 'UUID',
      nullable: true,
      description: 'The delivery this one sends again.',
    }),
    status: t.expose('status', { type: DeliveryStatusEnum, description: 'Pending, succeeded or failed.' }),
    attemptCount: t.exposeInt('attempts', { description: 'Attempts made so far.' }),
    nextAttemptAt: t.expose('nextAttemptAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the next attempt is due, while pending.',
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
    finishedAt: t.expose('finishedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it finished (ISO 8601, UTC); null while it runs.',
    }),
    attempts: t.field({
      type: [AttemptRef],
      description: 'Every attempt, first first.',
      resolve: (delivery, _args, ctx) => service(ctx).attempts(delivery.id),
    }),
  }),
});

const EndpointRef = builder.objectRef<WebhookEndpoint>('WebhookEndpoint').implement({
  description:
    'A URL that receives this environment’s events as signed POST requests (Standard Webhooks), retried with ' +
    'growing waits for WEBHOOK_RETRY_HOURS (72) until it answers 2xx.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    url: t.exposeString('url', { description: 'The HTTPS URL events are POSTed to.' }),
    description: t.exposeString('description', {
      nullable: true,
      description: 'A note for people about the endpoint; null when none.',
    }),
    eventTypes: t.field({
      type: [EventTypeEnum],
      description: 'The event types it receives; empty: every type.',
      resolve: (endpoint) => endpoint.eventTypes as never,
    }),
    status: t.expose('status', {
      type: EndpointStatusEnum,
      description: 'Whether events are delivered to it.',
    }),
    disabledReason: t.expose('disabledReason', {
      type: DisabledReasonEnum,
      nullable: true,
      description: 'Why it is disabled; null while enabled.',
    }),
    failingSince: t.expose('failingSince', {
      type: 'DateTime',
      nullable: true,
      description: 'The first failed attempt since the last success.',
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      description: 'When it last changed (ISO 8601, UTC).',
    }),
    deliveries: t.connection(
      {
        type: DeliveryRef,
        description: 'Its deliveries, oldest first.',
        resolve: (endpoint, page, ctx) => service(ctx).deliveries(endpoint.id, page),
      },
      { name: 'WebhookDeliveryConnection' },
      { name: 'WebhookDeliveryEdge' },
    ),
  }),
});

const CreateInputRef = builder
  .inputType('WebhookEndpointCreateInput', {
    description: 'A new webhook endpoint.',
    fields: (t) => ({
      url: t.string({
        required: true,
        description: 'http:// or https://; hosts resolving to non-public addresses are refused.',
      }),
      description: t.string({ description: 'A note for people about the endpoint.' }),
      eventTypes: t.field({ type: [EventTypeEnum], description: 'Empty or absent: every type.' }),
    }),
  })
  .validate(WebhookEndpointCreateInput);

const UpdateInputRef = builder
  .inputType('WebhookEndpointUpdateInput', {
    description: 'Fields left out stay as they are; eventTypes null or empty: every type.',
    fields: (t) => ({
      url: t.string({ description: 'A new URL events are POSTed to.' }),
      description: t.string({ description: 'A new note; null clears it.' }),
      eventTypes: t.field({ type: [EventTypeEnum], description: 'A new list of event types it receives.' }),
    }),
  })
  .validate(WebhookEndpointUpdateInput);

/** The payload of the mutations that make a secret: the endpoint, and its secret this once. */
function secretPayloadType(name: string) {
  return builder
    .objectRef<{ created: EndpointWithSecret | null; userErrors: { field: string[] | null }[] }>(name)
    .implement({
      description:
        'What the mutation answers: the endpoint and its signing secret (shown this once), or the userErrors that refused it.',
      fields: (t) => ({
        webhookEndpoint: t.field({
          description: 'The endpoint as the mutation left it; null when userErrors is not empty.',
          type: EndpointRef,
          nullable: true,
          resolve: (payload) => payload.created?.endpoint ?? null,
        }),
        secret: t.string({
          nullable: true,
          description:
            'The signing secret (`whsec_` and base64), shown only now: give it to `new Webhook(secret)` of a ' +
            'Standard Webhooks library to verify deliveries.',
          resolve: (payload) => payload.created?.secret ?? null,
        }),
        userErrors: t.field({
          type: [UserErrorRef],
          description: 'Why the mutation changed nothing; empty when it succeeded.',
          resolve: (payload) => payload.userErrors as never,
        }),
      }),
    });
}

const EndpointPayload = payloadType('WebhookEndpointPayload', 'webhookEndpoint', EndpointRef);
const CreatePayload = secretPayloadType('WebhookEndpointCreatePayload');
const RotatePayload = secretPayloadType('WebhookEndpointRotateSecretPayload');
const DeliveryPayload = payloadType('WebhookDeliveryPayload', 'webhookDelivery', DeliveryRef);

builder.queryFields((t) => ({
  webhookEndpoints: t.connection(
    {
      type: EndpointRef,
      description: 'This environment’s webhook endpoints, oldest first.',
      resolve: (_root, page, ctx) => service(ctx).list(page),
    },
    { name: 'WebhookEndpointConnection' },
    { name: 'WebhookEndpointEdge' },
  ),
  webhookEndpoint: t.field({
    description: 'The webhook endpoint with this id; null when this environment has none.',
    type: EndpointRef,
    nullable: true,
    args: { id: t.arg({ type: 'UUID', required: true, description: 'The id of the object meant.' }) },
    resolve: async (_root, { id }, ctx) =>
      service(ctx)
        .get(id)
        .catch(() => null),
  }),
}));

const byId = { id: 'UUID' } as const;

builder.mutationFields((t) => ({
  webhookEndpointCreate: t.field({
    type: CreatePayload,
    description: 'Adds an endpoint; its signing secret is in the answer, and only there.',
    args: {
      input: t.arg({
        type: CreateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { input }, ctx) => withUserErrors('created', () => service(ctx).create(input)),
  }),
  webhookEndpointUpdate: t.field({
    description: 'Changes a webhook endpoint.',
    type: EndpointPayload,
    args: {
      id: t.arg({ type: byId.id, required: true, description: 'The id of the object meant.' }),
      input: t.arg({
        type: UpdateInputRef,
        required: true,
        description: 'The values to write (see the input type).',
      }),
    },
    resolve: (_root, { id, input }, ctx) =>
      withUserErrors('webhookEndpoint', () => service(ctx).update(id, input)),
  }),
  webhookEndpointDisable: t.field({
    type: EndpointPayload,
    description: 'Stops deliveries to the endpoint: pending ones fail at their next attempt.',
    args: { id: t.arg({ type: byId.id, required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) =>
      withUserErrors('webhookEndpoint', () => service(ctx).setEnabled(id, false)),
  }),
  webhookEndpointEnable: t.field({
    type: EndpointPayload,
    description: 'Delivers events to the endpoint again, from now on (resend what it missed).',
    args: { id: t.arg({ type: byId.id, required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) =>
      withUserErrors('webhookEndpoint', () => service(ctx).setEnabled(id, true)),
  }),
  webhookEndpointRotateSecret: t.field({
    type: RotatePayload,
    description: 'A new signing secret for every delivery from now on; the old one stops at once.',
    args: { id: t.arg({ type: byId.id, required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => withUserErrors('created', () => service(ctx).rotateSecret(id)),
  }),
  webhookEndpointSendTest: t.field({
    type: DeliveryPayload,
    description: 'Sends a `webhook.test` message to the endpoint now; see the delivery for the outcome.',
    args: { id: t.arg({ type: byId.id, required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => withUserErrors('webhookDelivery', () => service(ctx).sendTest(id)),
  }),
  webhookDeliveryResend: t.field({
    type: DeliveryPayload,
    description: 'Sends a delivery’s message again now, as a new delivery (the same `webhook-id`).',
    args: { id: t.arg({ type: byId.id, required: true, description: 'The id of the object meant.' }) },
    resolve: (_root, { id }, ctx) => withUserErrors('webhookDelivery', () => service(ctx).resend(id)),
  }),
}));
