import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { ServiceContext } from '../../context.ts';
import { type Connection, keysetPage, type PageArgs } from '../../db/pagination.ts';
import { DomainError } from '../../errors.ts';
import { enqueueJob } from '../../jobs/enqueue.ts';
import { EVENT_TYPES } from '../event/event.entity.ts';
import {
  type WebhookDelivery,
  type WebhookDeliveryAttempt,
  WebhookDeliveryAttemptSchema,
  WebhookDeliverySchema,
  type WebhookEndpoint,
  WebhookEndpointSchema,
} from './webhook.entity.ts';
import { refusedTarget, type TargetPolicy } from './webhook.targets.ts';

/** The job that makes one attempt of one delivery. */
export const WEBHOOK_DELIVERY_TASK = 'webhook-delivery';
export type WebhookDeliveryJob = { environmentId: string; deliveryId: string };

/** The type of the message webhookEndpointSendTest sends (no event of it is recorded). */
export const TEST_EVENT_TYPE = 'webhook.test';

/** Adds the job of `delivery`'s next attempt in the transaction of `em`; one waiting job per delivery. */
export function enqueueDelivery(
  em: ServiceContext['em'],
  job: WebhookDeliveryJob,
  runAt?: Date,
): Promise<void> {
  return enqueueJob(em, WEBHOOK_DELIVERY_TASK, job, {
    jobKey: `${WEBHOOK_DELIVERY_TASK}:${job.deliveryId}`,
    ...(runAt ? { runAt } : {}),
    maxAttempts: 5,
  });
}

/** A new signing secret: `whsec_` and 32 random bytes in base64, as Standard Webhooks libraries take it. */
export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

const webhookUrl = z
  .string()
  .trim()
  .max(2000)
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
      } catch {
        return false;
      }
    },
    { error: 'must be an http:// or https:// URL without user name or password' },
  );

export const WebhookEndpointCreateInput = z.strictObject({
  url: webhookUrl,
  description: z.string().trim().max(500).nullish(),
  eventTypes: z.array(z.enum(EVENT_TYPES)).max(EVENT_TYPES.length).nullish(),
});
export type WebhookEndpointCreateInput = z.infer<typeof WebhookEndpointCreateInput>;

export const WebhookEndpointUpdateInput = z.strictObject({
  url: webhookUrl.optional(),
  description: z.string().trim().max(500).nullish(),
  eventTypes: z.array(z.enum(EVENT_TYPES)).max(EVENT_TYPES.length).nullish(),
});
export type WebhookEndpointUpdateInput = z.infer<typeof WebhookEndpointUpdateInput>;

/** An endpoint and its secret, shown this once. */
export type EndpointWithSecret = { endpoint: WebhookEndpoint; secret: string };

/**
 * The environment's webhook endpoints: made, changed, disabled and enabled, their secrets rotated, their
 * deliveries listed, resent and tested. URLs reaching non-public addresses are refused (TargetPolicy).
 */
export class WebhookService {
  private readonly ctx: ServiceContext;
  private readonly policy: TargetPolicy;

  constructor(ctx: ServiceContext, policy: TargetPolicy) {
    this.ctx = ctx;
    this.policy = policy;
  }

  find(id: string): Promise<WebhookEndpoint | null> {
    return this.ctx.em.findOne(WebhookEndpointSchema, { id, environmentId: this.ctx.environmentId });
  }

  async get(id: string): Promise<WebhookEndpoint> {
    const endpoint = await this.find(id);
    if (!endpoint) throw DomainError.notFound('Webhook endpoint', id);
    return endpoint;
  }

  list(page: PageArgs): Promise<Connection<WebhookEndpoint>> {
    return keysetPage(this.ctx.em, WebhookEndpointSchema, { environmentId: this.ctx.environmentId }, page);
  }

  async create(input: WebhookEndpointCreateInput): Promise<EndpointWithSecret> {
    const url = await this.checkedUrl(input.url);
    const secret = newSecret();
    const endpoint = this.ctx.em.create(WebhookEndpointSchema, {
      environmentId: this.ctx.environmentId,
      url,
      description: input.description ?? null,
      eventTypes: unique(input.eventTypes ?? []),
      secret,
      status: 'enabled',
      disabledReason: null,
      failingSince: null,
    });
    await this.ctx.em.flush();
    return { endpoint, secret };
  }

  async update(id: string, input: WebhookEndpointUpdateInput): Promise<WebhookEndpoint> {
    const endpoint = await this.get(id);
    if (input.url !== undefined) endpoint.url = await this.checkedUrl(input.url);
    if (input.description !== undefined) endpoint.description = input.description;
    if (input.eventTypes !== undefined) endpoint.eventTypes = unique(input.eventTypes ?? []);
    endpoint.updatedAt = new Date();
    await this.ctx.em.flush();
    return endpoint;
  }

  /** Disabled: no new deliveries, and those under way end at their next attempt. */
  async setEnabled(id: string, enabled: boolean): Promise<WebhookEndpoint> {
    const endpoint = await this.get(id);
    if (enabled && endpoint.status !== 'enabled') {
      Object.assign(endpoint, { status: 'enabled', disabledReason: null, failingSince: null });
    } else if (!enabled && endpoint.status !== 'disabled') {
      Object.assign(endpoint, { status: 'disabled', disabledReason: 'manual' });
    }
    endpoint.updatedAt = new Date();
    await this.ctx.em.flush();
    return endpoint;
  }

  /** A new secret signs every delivery from now on; the old one signs none. */
  async rotateSecret(id: string): Promise<EndpointWithSecret> {
    const endpoint = await this.get(id);
    const secret = newSecret();
    endpoint.secret = secret;
    endpoint.updatedAt = new Date();
    await this.ctx.em.flush();
    return { endpoint, secret };
  }

  async deliveries(endpointId: string, page: PageArgs): Promise<Connection<WebhookDelivery>> {
    return keysetPage(
      this.ctx.em,
      WebhookDeliverySchema,
      { environmentId: this.ctx.environmentId, endpointId },
      page,
    );
  }

  attempts(deliveryId: string): Promise<WebhookDeliveryAttempt[]> {
    return this.ctx.em.find(
      WebhookDeliveryAttemptSchema,
      { environmentId: this.ctx.environmentId, deliveryId },
      { orderBy: { number: 'asc' } },
    );
  }

  /** The same message to the same endpoint again, now, as a new delivery with attempts of its own. */
  async resend(deliveryId: string): Promise<WebhookDelivery> {
    const original = await this.ctx.em.findOne(WebhookDeliverySchema, {
      id: deliveryId,
      environmentId: this.ctx.environmentId,
    });
    if (!original) throw DomainError.notFound('Webhook delivery', deliveryId);
    const endpoint = await this.get(original.endpointId);
    if (endpoint.status !== 'enabled') {
      throw new DomainError('CONFLICT', 'the endpoint is disabled: enable it before resending');
    }
    return this.newDelivery(endpoint, {
      eventId: original.eventId,
      eventType: original.eventType,
      payload: original.payload ?? null,
      // The first delivery of the message: its id is a test message's webhook-id.
      resendOf: original.resendOf ?? original.id,
    });
  }

  /** A `webhook.test` message to this endpoint alone, sent now (whatever its event types). */
  async sendTest(endpointId: string): Promise<WebhookDelivery> {
    const endpoint = await this.get(endpointId);
    if (endpoint.status !== 'enabled') {
      throw new DomainError('CONFLICT', 'the endpoint is disabled: enable it before testing it');
    }
    return this.newDelivery(endpoint, {
      eventId: null,
      eventType: TEST_EVENT_TYPE,
      payload: { message: 'A test message from the billing service', endpointId: endpoint.id },
      resendOf: null,
    });
  }

  private async newDelivery(
    endpoint: WebhookEndpoint,
    what: Pick<WebhookDelivery, 'eventId' | 'eventType' | 'payload' | 'resendOf'>,
  ): Promise<WebhookDelivery> {
    const delivery = this.ctx.em.create(WebhookDeliverySchema, {
      environmentId: this.ctx.environmentId,
      endpointId: endpoint.id,
      ...what,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: new Date(),
      attemptStartedAt: null,
      finishedAt: null,
    });
    await this.ctx.em.flush();
    await enqueueDelivery(this.ctx.em, { environmentId: this.ctx.environmentId, deliveryId: delivery.id });
    return delivery;
  }

  private async checkedUrl(value: string): Promise<string> {
    const url = new URL(value);
    const refusal = await refusedTarget(url, this.policy);
    if (refusal) {
      throw DomainError.onField(
        'INVALID_INPUT',
        ['url'],
        `${refusal}: webhooks go to public addresses only (WEBHOOK_ALLOW_PRIVATE_TARGETS)`,
      );
    }
    return url.href;
  }
}

const unique = <T>(values: readonly T[]): T[] => [...new Set(values)];
