import { z } from 'zod';
import type { Route } from '../../rest/router.ts';
import { EVENT_STATUSES, REJECTION_REASONS, UsageIngestService } from './ingest.service.ts';
import { MAX_EVENTS_PER_BATCH } from './metering.input.ts';

const UsageEventBody = z
  .strictObject({
    transactionId: z.string().min(1).max(255).meta({
      description: 'Unique within the environment for ever: sending it again is answered `duplicate`.',
    }),
    customer: z.string().min(1).max(255).meta({ description: 'The customer’s id or handle' }),
    metric: z.string().min(1).max(100).meta({ description: 'The code of a billable metric' }),
    timestamp: z.iso.datetime({ offset: true }).meta({
      description: 'When the usage happened; at most 24 hours ahead of the server clock',
    }),
    properties: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'UsageEvent' });

/** The request as documented; the handler checks each event on its own (see UsageIngestService). */
const UsageEventBatchBody = z.strictObject({
  events: z.array(UsageEventBody).min(1).max(MAX_EVENTS_PER_BATCH),
});

const UsageEventBatchResponse = z.strictObject({
  accepted: z.number().int(),
  duplicates: z.number().int(),
  rejected: z.number().int(),
  results: z.array(
    z.strictObject({
      transactionId: z.string().nullable(),
      status: z.enum(EVENT_STATUSES),
      reason: z.enum(REJECTION_REASONS).nullable(),
      message: z.string().nullable(),
    }),
  ),
});

export const meteringRoutes: Route[] = [
  {
    method: 'POST',
    path: '/events',
    summary: 'Ingest a batch of usage events',
    beyondContract: true,
    body: UsageEventBatchBody,
    response: {
      status: 200,
      description:
        `Up to ${MAX_EVENTS_PER_BATCH} events, each answered on its own, in the order sent: \`accepted\` (stored), ` +
        '`duplicate` (its transactionId was taken before; nothing stored) or `rejected` with a reason ' +
        '(invalid, unknown_customer, unknown_metric, timestamp_in_future, property_missing, ' +
        'property_not_a_number, period_billed). One bad event never refuses the others; a retry of the whole batch is safe.',
      schema: UsageEventBatchResponse,
    },
    handler: async ({ ctx, body }) => ({ status: 200, body: await new UsageIngestService(ctx).ingest(body) }),
  },
];
