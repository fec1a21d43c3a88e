import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { createJobContext } from '../../context.ts';
import { newId } from '../../db/ids.ts';
import { inEnvironment } from '../../db/tenant-transaction.ts';
import type { EventScope, OwnerQuery, WebhookSettings } from '../../jobs/runner.ts';
import type { Logger } from '../../logger.ts';
import { EventSchema } from '../event/event.entity.ts';
import { recordEvent } from '../event/event.service.ts';
import { type WebhookEndpoint, WebhookEndpointSchema } from './webhook.entity.ts';
import { type AttemptOutcome, type OutgoingWebhook, sendWebhook } from './webhook.sender.ts';
import { enqueueDelivery, type WebhookDeliveryJob } from './webhook.service.ts';

/** The longest wait between two attempts of a delivery. */
const MAX_RETRY_DELAY_MS = 12 * 3600_000;

/**
 * The wait after the `attempts`-th failed attempt: WEBHOOK_RETRY_BASE_MS, then three times longer each
 * time, at most 12 hours (10 s, 30 s, 90 s, 4.5 min, 13.5 min, 40 min, 2 h, 6 h, 12 h, 12 h, … by default).
 */
export const retryDelayMs = (settings: WebhookSettings, attempts: number): number =>
  Math.min(settings.retryBaseMs * 3 ** Math.max(0, attempts - 1), MAX_RETRY_DELAY_MS);

/**
 * An attempt started longer ago than this and never recorded belongs to a process that died: its
 * delivery is sent again. Longer than any attempt can take.
 */
export const staleAfterMs = (settings: WebhookSettings): number => 2 * settings.timeoutMs + 5000;

/** The JSON body of a delivery: Standard Webhooks' `type`, `timestamp` and `data`, and the event's id. */
export function messageBody(event: {
  id: string | null;
  type: string;
  createdAt: Date;
  data: Record<string, unknown>;
}): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    timestamp: event.createdAt.toISOString(),
    data: event.data,
  });
}

/**
 * Whether an enabled endpoint of the environment wants events of the type: when none does, an event's
 * fan-out would add no delivery (it also leaves out endpoints created after the event), so it needs no
 * job. One read, in the environment's transaction.
 */
export function endpointListens({ environmentId, type }: EventScope, orm: MikroORM): Promise<boolean> {
  return inEnvironment(orm.em.fork(), environmentId, async (tx) => {
    const rows = await tx.execute<unknown[]>(
      `select 1 from webhook_endpoint
       where environment_id = ? and status = 'enabled' and (cardinality(event_types) = 0 or ? = any(event_types))
       limit 1`,
      [environmentId, type],
    );
    return rows.length > 0;
  });
}

/**
 * endpointListens for many environments and types at once (the event relay's batch): one read as the
 * owner, the environment named in the query as row-level security would confine it.
 */
export async function endpointsListen(scopes: readonly EventScope[], query: OwnerQuery): Promise<boolean[]> {
  const rows = await query<{ i: string }>(
    `select s.i from unnest($1::uuid[], $2::text[]) with ordinality as s (environment_id, type, i)
     where exists (
       select 1 from webhook_endpoint e
       where e.environment_id = s.environment_id and e.status = 'enabled'
         and (cardinality(e.event_types) = 0 or s.type = any(e.event_types)))`,
    [scopes.map((scope) => scope.environmentId), scopes.map((scope) => scope.type)],
  );
  const wanted = new Set(rows.map((row) => Number(row.i) - 1));
  return scopes.map((_, i) => wanted.has(i));
}

type Claim = { message: OutgoingWebhook; attempts: number; createdAt: Date; startedAt: Date };

type DeliveryRow = {
  id: string;
  status: string;
  attempts: number;
  event_id: string | null;
  event_type: string;
  payload: Record<string, unknown> | null;
  resend_of: string | null;
  next_attempt_at: Date | null;
  attempt_started_at: Date | null;
  created_at: Date;
  url: string;
  secret: string;
  endpoint_status: string;
};

/**
 * Webhook deliveries: one per event and endpoint, each attempt recorded, retried with growing waits for
 * WEBHOOK_RETRY_HOURS. At least once: a delivery is marked done only after its endpoint answered 2xx,
 * and one whose process died is found by the sweep and sent again.
 */
export class WebhookDispatcher {
  private readonly orm: MikroORM;
  private readonly settings: WebhookSettings;
  private readonly logger: Logger;

  constructor(orm: MikroORM, settings: WebhookSettings, logger: Logger) {
    this.orm = orm;
    this.settings = settings;
    this.logger = logger;
  }

  /**
   * A delivery of the event to each enabled endpoint that wants its type (and existed when it happened),
   * each with the job of its first attempt. Done twice, it adds none twice.
   */
  async fanOut(environmentId: string, eventId: string): Promise<number> {
    return inEnvironment(this.orm.em.fork(), environmentId, async (tx) => {
      const event = await tx.findOne(EventSchema, { id: eventId, environmentId });
      if (!event) return 0;
      const endpoints = await tx.execute<{ id: string }[]>(
        `select id from webhook_endpoint
         where environment_id = ? and status = 'enabled' and created_at <= ?
           and (cardinality(event_types) = 0 or ? = any(event_types))`,
        [environmentId, event.createdAt, event.type],
      );
      let added = 0;
      for (const endpoint of endpoints) {
        const deliveryId = newId();
        const inserted = await tx.execute<{ id: string }[]>(
          `insert into webhook_delivery (id, environment_id, endpoint_id, event_id, event_type, status,
             attempts, next_attempt_at, created_at)
           values (?, ?, ?, ?, ?, 'pending', 0, now(), now())
           on conflict (endpoint_id, event_id) where resend_of is null and event_id is not null do nothing
           returning id`,
          [deliveryId, environmentId, endpoint.id, event.id, event.type],
        );
        if (inserted.length === 0) continue;
        await enqueueDelivery(tx, { environmentId, deliveryId });
        added += 1;
      }
      return added;
    });
  }

  /** One attempt of a delivery, if it is still due; the next one scheduled when it fails. */
  async attempt({ environmentId, deliveryId }: WebhookDeliveryJob): Promise<AttemptOutcome | null> {
    const claim = await inEnvironment(this.orm.em.fork(), environmentId, (tx) =>
      this.claim(tx, environmentId, deliveryId),
    );
    if (!claim) return null;
    const outcome = await sendWebhook(claim.message, {
      timeoutMs: this.settings.timeoutMs,
      policy: { allowPrivateTargets: this.settings.allowPrivateTargets },
    });
    await inEnvironment(this.orm.em.fork(), environmentId, (tx) =>
      this.record(tx, environmentId, deliveryId, claim, outcome),
    );
    return outcome;
  }

  /** Marks the delivery as being sent now and returns its signed message; null when there is nothing to do. */
  private async claim(tx: EntityManager, environmentId: string, deliveryId: string): Promise<Claim | null> {
    const [row] = await tx.execute<DeliveryRow[]>(
      `select d.id, d.status, d.attempts, d.event_id, d.event_type, d.payload, d.resend_of, d.next_attempt_at,
         d.attempt_started_at, d.created_at, e.url, e.secret, e.status as endpoint_status
       from webhook_delivery d join webhook_endpoint e on e.id = d.endpoint_id
       where d.id = ? and d.environment_id = ? for update of d`,
      [deliveryId, environmentId],
    );
    if (row?.status !== 'pending') return null;
    // Timestamps as Date whatever the driver hands back.
    for (const key of ['next_attempt_at', 'attempt_started_at', 'created_at'] as const) {
      if (row[key] !== null) Object.assign(row, { [key]: new Date(row[key] as Date) });
    }
    const now = new Date();
    const job = { environmentId, deliveryId };
    if (
      row.attempt_started_at &&
      now.getTime() - row.attempt_started_at.getTime() < staleAfterMs(this.settings)
    ) {
      // Another worker is sending it: look again once its attempt must have ended.
      await enqueueDelivery(
        tx,
        job,
        new Date(row.attempt_started_at.getTime() + staleAfterMs(this.settings)),
      );
      return null;
    }
    if (row.next_attempt_at && row.next_attempt_at.getTime() > now.getTime() + 1000) {
      await enqueueDelivery(tx, job, row.next_attempt_at);
      return null;
    }
    if (row.endpoint_status !== 'enabled') {
      await this.finish(tx, deliveryId, 'failed');
      return null;
    }
    let body: string;
    if (row.payload) {
      body = messageBody({ id: null, type: row.event_type, createdAt: row.created_at, data: row.payload });
    } else {
      const event = await tx.findOne(EventSchema, { id: row.event_id as string, environmentId });
      if (!event) {
        // Purged (EVENT_RETENTION_DAYS): there is nothing left to send.
        await this.finish(tx, deliveryId, 'failed');
        return null;
      }
      body = messageBody(event);
    }
    await tx.execute(
      'update webhook_delivery set attempt_started_at = ? where id = ?',
      [now, deliveryId],
      'run',
    );
    return {
      message: { url: row.url, secret: row.secret, messageId: row.event_id ?? row.resend_of ?? row.id, body },
      attempts: row.attempts,
      createdAt: row.created_at,
      startedAt: now,
    };
  }

  private async record(
    tx: EntityManager,
    environmentId: string,
    deliveryId: string,
    claim: Claim,
    outcome: AttemptOutcome,
  ): Promise<void> {
    // The row as it is now: an attempt that outlived staleAfterMs may find another one claimed since.
    const [delivery] = await tx.execute<
      { endpoint_id: string; status: string; attempts: number; attempt_started_at: Date | null }[]
    >(
      'select endpoint_id, status, attempts, attempt_started_at from webhook_delivery where id = ? for update',
      [deliveryId],
    );
    if (!delivery) return;
    const number = delivery.attempts + 1;
    await tx.execute(
      `insert into webhook_delivery_attempt (id, environment_id, delivery_id, number, started_at, duration_ms,
         status_code, response_body, error)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        newId(),
        environmentId,
        deliveryId,
        number,
        claim.startedAt,
        outcome.durationMs,
        outcome.statusCode,
        outcome.responseBody?.replaceAll('\u0000', '') ?? null,
        outcome.error,
      ],
      'run',
    );
    const startedAt = delivery.attempt_started_at && new Date(delivery.attempt_started_at).getTime();
    const superseded = delivery.status !== 'pending' || startedAt !== claim.startedAt.getTime();
    if (superseded && !(outcome.ok && delivery.status === 'pending')) {
      // Done meanwhile, or another attempt claimed it: that one decides what comes next.
      await tx.execute('update webhook_delivery set attempts = ? where id = ?', [number, deliveryId], 'run');
      return;
    }
    const endpointId = delivery.endpoint_id;
    if (outcome.ok) {
      await tx.execute(
        `update webhook_delivery set status = 'succeeded', attempts = ?, attempt_started_at = null,
           next_attempt_at = null, finished_at = now() where id = ?`,
        [number, deliveryId],
        'run',
      );
      await tx.execute(
        'update webhook_endpoint set failing_since = null where id = ? and failing_since is not null',
        [endpointId],
        'run',
      );
      return;
    }
    const now = Date.now();
    const deadline = claim.createdAt.getTime() + this.settings.retryPeriodMs;
    const next = now >= deadline ? null : Math.min(now + retryDelayMs(this.settings, number), deadline);
    if (next === null) {
      await tx.execute(
        `update webhook_delivery set status = 'failed', attempts = ?, attempt_started_at = null,
           next_attempt_at = null, finished_at = now() where id = ?`,
        [number, deliveryId],
        'run',
      );
    } else {
      await tx.execute(
        `update webhook_delivery set attempts = ?, attempt_started_at = null, next_attempt_at = ? where id = ?`,
        [number, new Date(next), deliveryId],
        'run',
      );
      await enqueueDelivery(tx, { environmentId, deliveryId }, new Date(next));
    }
    await this.noteFailure(tx, environmentId, endpointId, claim.startedAt);
  }

  /**
   * An endpoint failing since longer than the retry period, every attempt, is disabled, and a
   * `webhook_endpoint.disabled` event says so.
   */
  private async noteFailure(
    tx: EntityManager,
    environmentId: string,
    endpointId: string,
    failedAt: Date,
  ): Promise<void> {
    const em = createJobContext(tx, environmentId, 'webhookDelivery').em;
    const endpoint = await em.findOne(WebhookEndpointSchema, { id: endpointId, environmentId });
    if (!endpoint) return;
    endpoint.failingSince ??= failedAt;
    if (
      endpoint.status === 'enabled' &&
      Date.now() - endpoint.failingSince.getTime() >= this.settings.retryPeriodMs
    ) {
      endpoint.status = 'disabled';
      endpoint.disabledReason = 'failing';
      endpoint.updatedAt = new Date();
      recordEvent(em, environmentId, {
        type: 'webhook_endpoint.disabled',
        objectType: 'webhook_endpoint',
        objectId: endpoint.id,
        data: endpointView(endpoint),
      });
      this.logger.warn(
        { environmentId, endpointId },
        'disabled a webhook endpoint failing for the retry period',
      );
    }
    await em.flush();
  }

  private async finish(tx: EntityManager, deliveryId: string, status: 'failed'): Promise<void> {
    await tx.execute(
      `update webhook_delivery set status = ?, attempt_started_at = null, next_attempt_at = null,
         finished_at = now() where id = ?`,
      [status, deliveryId],
      'run',
    );
  }

  /**
   * Finds what a dead process left behind and queues it again: deliveries due (or being sent) for longer
   * than an attempt can take, and recent events that have no delivery to an endpoint that wants them
   * (their fan-out job died with its process). Returns how many jobs it added.
   */
  async sweep(): Promise<number> {
    const stale = staleAfterMs(this.settings);
    const environments = await this.orm.em
      .fork()
      .execute<{ id: string }[]>('select id from environment order by id');
    let queued = 0;
    for (const { id: environmentId } of environments) {
      queued += await inEnvironment(this.orm.em.fork(), environmentId, async (tx) => {
        const deliveries = await tx.execute<{ id: string }[]>(
          `select id from webhook_delivery
           where environment_id = ? and status = 'pending'
             and next_attempt_at < now() - make_interval(secs => ?)
             and (attempt_started_at is null or attempt_started_at < now() - make_interval(secs => ?))
           order by id limit 1000`,
          [environmentId, stale / 1000, stale / 1000],
        );
        for (const { id } of deliveries) await enqueueDelivery(tx, { environmentId, deliveryId: id });
        const events = await tx.execute<{ id: string; type: string }[]>(
          `select distinct ev.id, ev.type from event ev
           join webhook_endpoint w on w.environment_id = ev.environment_id
           where ev.environment_id = ? and w.status = 'enabled' and ev.created_at >= w.created_at
             and ev.created_at > now() - make_interval(secs => ?)
             and ev.created_at < now() - make_interval(secs => ?)
             and (cardinality(w.event_types) = 0 or ev.type = any(w.event_types))
             and not exists (select 1 from webhook_delivery d
                             where d.endpoint_id = w.id and d.event_id = ev.id and d.resend_of is null)
           order by ev.id limit 1000`,
          [environmentId, this.settings.retryPeriodMs / 1000, stale / 1000],
        );
        for (const event of events) {
          await tx.execute(
            'select enqueue_job(?, ?::json, ?)',
            [
              WEBHOOK_FAN_OUT_TASK,
              JSON.stringify({ eventId: event.id, environmentId, type: event.type }),
              `${WEBHOOK_FAN_OUT_TASK}:${event.id}`,
            ],
            'run',
          );
        }
        return deliveries.length + events.length;
      });
    }
    if (queued > 0) this.logger.info({ count: queued }, 'queued abandoned webhook work again');
    return queued;
  }
}

/** The event listener's task: the deliveries of one event. */
export const WEBHOOK_FAN_OUT_TASK = 'webhook-fan-out';

/** An endpoint as the API shows it (never its secret). */
export function endpointView(endpoint: WebhookEndpoint): Record<string, unknown> {
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description ?? null,
    eventTypes: endpoint.eventTypes,
    status: endpoint.status,
    disabledReason: endpoint.disabledReason ?? null,
    failingSince: endpoint.failingSince ?? null,
    createdAt: endpoint.createdAt,
    updatedAt: endpoint.updatedAt,
  };
}
