import { defineEntity, type InferEntity, p } from '@mikro-orm/core';
import { excludeFromAudit } from '../../audit/audit.subscriber.ts';
import { tenantKeys } from '../../db/tenant-keys.ts';

/**
 * The kinds of events, `<object>.<what happened>`. Each carries the object as the API shows it at
 * that moment.
 */
export const EVENT_TYPES = [
  'customer.created',
  'customer.updated',
  'invoice.created',
  'invoice.booked',
  'invoice.settled',
  'invoice.voided',
  'invoice.marked_uncollectible',
  'invoice.overdue',
  'credit_note.booked',
  'subscription.created',
  'subscription.updated',
  'subscription.cancelled',
  'billing_run.finished',
  'billing_run.skipped',
  'webhook_endpoint.disabled',
  'usage_threshold.crossed',
  'test_clock.created',
  'test_clock.advancing',
  'test_clock.ready',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** One thing that happened to one object of an environment, recorded in the change's transaction. */
export const EventSchema = defineEntity({
  name: 'Event',
  tableName: 'event',
  properties: {
    ...tenantKeys(),
    type: p.string().length(60),
    objectType: p.string().length(40),
    objectId: p.uuid(),
    data: p.json<Record<string, unknown>>(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

excludeFromAudit(EventSchema);

export type Event = InferEntity<typeof EventSchema>;
