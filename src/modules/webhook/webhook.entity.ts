import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { excludeFromAudit } from '../../audit/audit.subscriber.ts';
import { tenantKeys } from '../../db/tenant-keys.ts';

export const WEBHOOK_ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;
export type WebhookEndpointStatus = (typeof WEBHOOK_ENDPOINT_STATUSES)[number];

/** Why an endpoint is disabled: someone disabled it, or it failed every attempt for the retry period. */
export const WEBHOOK_DISABLED_REASONS = ['manual', 'failing'] as const;
export type WebhookDisabledReason = (typeof WEBHOOK_DISABLED_REASONS)[number];

/**
 * A URL of the environment's that receives its events, signed with the endpoint's secret (Standard
 * Webhooks). `eventTypes` empty: every type.
 */
export const WebhookEndpointSchema = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoint',
  properties: {
    ...tenantKeys(),
    url: p.text(),
    description: p.string().length(500).nullable(),
    eventTypes: p.array().onCreate(() => []),
    /** `whsec_` and the base64 key: needed in clear to sign, shown only when made (create, rotate). */
    secret: p.text().hidden(),
    status: p.enum(WEBHOOK_ENDPOINT_STATUSES).default('enabled'),
    disabledReason: p.enum(WEBHOOK_DISABLED_REASONS).nullable(),
    /** The first failed attempt since the last success; null while the endpoint answers. */
    failingSince: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()),
  },
});

export type WebhookEndpoint = InferEntity<typeof WebhookEndpointSchema>;

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/**
 * One event on its way to one endpoint (or a test message, `eventId` null): retried until an attempt
 * gets a 2xx answer or the retry period is over.
 */
export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_delivery',
  properties: {
    ...tenantKeys(),
    endpointId: p.uuid(),
    eventId: p.uuid().nullable(),
    eventType: p.string().length(60),
    /** The message of a test delivery (there is no event to read it from). */
    payload: p.json<Record<string, unknown>>().nullable(),
    /** The delivery this one sends again (webhookDeliveryResend). */
    resendOf: p.uuid().nullable(),
    status: p.enum(WEBHOOK_DELIVERY_STATUSES),
    attempts: p.integer().default(0),
    nextAttemptAt: p.datetime().nullable(),
    /** Set while a worker is sending; an old one is an attempt whose process died. */
    attemptStartedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    finishedAt: p.datetime().nullable(),
  },
});

export type WebhookDelivery = InferEntity<typeof WebhookDeliverySchema>;

/** One HTTP request of a delivery and what came of it. */
export const WebhookDeliveryAttemptSchema = defineEntity({
  name: 'WebhookDeliveryAttempt',
  tableName: 'webhook_delivery_attempt',
  properties: {
    ...tenantKeys(),
    deliveryId: p.uuid(),
    number: p.integer(),
    startedAt: p.datetime(),
    durationMs: p.integer(),
    statusCode: p.integer().nullable(),
    /** The start of the answer's body (WEBHOOK_RESPONSE_EXCERPT characters at most). */
    responseBody: p.text().nullable(),
    error: p.text().nullable(),
  },
});

export type WebhookDeliveryAttempt = InferEntity<typeof WebhookDeliveryAttemptSchema>;

// Written by workers at every attempt, and records of what happened themselves.
excludeFromAudit(WebhookDeliverySchema);
excludeFromAudit(WebhookDeliveryAttemptSchema);
