import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { type Connection, keysetPage, type PageArgs } from '../../db/pagination.ts';
import { deleteInEveryEnvironment } from '../../db/tenant-transaction.ts';
import { type Event, EventSchema, type EventType } from './event.entity.ts';

/** What happened, to which object, and that object as the API shows it now. */
export type EventInput = { type: EventType; objectType: string; objectId: string; data: object };

export type EventFilter = {
  type?: EventType | null;
  objectId?: string | null;
  createdAfter?: Date | null;
  createdBefore?: Date | null;
};

/**
 * Records an event with the change it describes: it is persisted by the same flush, in the same
 * transaction, so it exists if and only if the change commits.
 */
export function recordEvent(em: EntityManager, environmentId: string, event: EventInput): Event {
  return em.create(EventSchema, {
    environmentId,
    type: event.type,
    objectType: event.objectType,
    objectId: event.objectId,
    // A plain JSON copy: later changes to the object do not reach the event.
    data: JSON.parse(JSON.stringify(event.data)) as Record<string, unknown>,
  });
}

/** Reading the events of one environment, oldest first. */
export class EventService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  list(filter: EventFilter, page: PageArgs): Promise<Connection<Event>> {
    const createdAt = {
      ...(filter.createdAfter ? { $gte: filter.createdAfter } : {}),
      ...(filter.createdBefore ? { $lt: filter.createdBefore } : {}),
    };
    return keysetPage(
      this.ctx.em,
      EventSchema,
      {
        environmentId: this.ctx.environmentId,
        ...(filter.type ? { type: filter.type } : {}),
        ...(filter.objectId ? { objectId: filter.objectId.toLowerCase() } : {}),
        ...(Object.keys(createdAt).length > 0 ? { createdAt } : {}),
      },
      page,
    );
  }
}

/** Deletes events older than `retentionDays`, in every environment; returns how many. */
export function purgeExpiredEvents(em: EntityManager, retentionDays: number): Promise<number> {
  return deleteInEveryEnvironment(
    em,
    'delete from event where created_at < now() - make_interval(days => ?)',
    [retentionDays],
  );
}
