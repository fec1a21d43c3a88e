import { filter, map, pipe } from 'graphql-yoga';
import type { RequestContext } from '../../context.ts';
import { sessionUrlOf } from '../../db/orm.ts';
import { inEnvironment } from '../../db/tenant-transaction.ts';
import { type Event, EventSchema, type EventType } from './event.entity.ts';
import { eventFeed } from './event.feed.ts';

export type LiveEventFilter = { types: readonly EventType[] | null; objectId?: string | null };

/**
 * The request's environment's events as they commit, each read back under its row-level security
 * (the notification carries only the id), filtered as asked.
 */
export async function liveEvents(
  ctx: RequestContext,
  { types, objectId }: LiveEventFilter,
): Promise<AsyncIterable<Event>> {
  const { environmentId } = ctx;
  const wanted = objectId?.toLowerCase() ?? null;
  // LISTEN needs a session of its own: DATABASE_SESSION_URL, where a pooler in transaction mode is not.
  const feed = eventFeed(sessionUrlOf(ctx.em.config.get('clientUrl') as string));
  return pipe(
    await feed.subscribe(environmentId, ctx.token.id),
    filter((published) => !types || types.includes(published.type as EventType)),
    map((published) =>
      inEnvironment(ctx.em, environmentId, (tx) =>
        tx.findOne(EventSchema, { id: published.eventId, environmentId }),
      ),
    ),
    filter((event): event is Event => event !== null && (!wanted || event.objectId === wanted)),
  );
}
