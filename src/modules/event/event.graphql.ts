import { builder } from '../../graphql/builder.ts';
import { EVENT_TYPES, type Event, type EventType } from './event.entity.ts';
import { liveEvents } from './event.live.ts';
import { EventService } from './event.service.ts';

export const EventTypeEnum = builder.enumType('EventType', {
  description: 'What happened: `<object>.<what happened>`.',
  values: Object.fromEntries(
    EVENT_TYPES.map((type) => [type.replace('.', '_').toUpperCase(), { value: type, description: type }]),
  ),
});

const EventRef = builder.objectRef<Event>('Event').implement({
  description:
    'Something that happened to an object of the environment, recorded in the same transaction as the ' +
    'change: it exists if and only if the change committed. Kept EVENT_RETENTION_DAYS (30) days.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Its id, a UUID.' }),
    type: t.field({
      type: EventTypeEnum,
      resolve: (event) => event.type as EventType,
      description: 'What happened.',
    }),
    objectType: t.exposeString('objectType', { description: 'The kind of object: customer, invoice, …' }),
    objectId: t.expose('objectId', { type: 'UUID', description: 'The id of the object it happened to.' }),
    data: t.expose('data', {
      type: 'JSONObject',
      description:
        'The object as the REST API shows it at the moment of the event (its GraphQL fields where REST has none).',
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When it was created (ISO 8601, UTC).',
    }),
  }),
});

builder.queryFields((t) => ({
  events: t.connection(
    {
      type: EventRef,
      description: 'The events of this environment, oldest first.',
      args: {
        type: t.arg({ type: EventTypeEnum, description: 'Only events of this type.' }),
        objectId: t.arg({ type: 'UUID', description: 'Only the events about this object.' }),
        createdAfter: t.arg({ type: 'DateTime', description: 'Only events at or after this moment.' }),
        createdBefore: t.arg({ type: 'DateTime', description: 'Only events before this moment.' }),
      },
      resolve: (_root, { type, objectId, createdAfter, createdBefore, ...page }, ctx) =>
        new EventService(ctx).list({ type, objectId, createdAfter, createdBefore }, page),
    },
    { name: 'EventConnection' },
    { name: 'EventEdge' },
  ),
}));

builder.subscriptionFields((t) => ({
  events: t.field({
    type: EventRef,
    description:
      'Each event of this environment as its change commits, in any server process: the same objects the ' +
      '`events` query returns. Filtered by `types` (all when absent) and `objectId`. In GraphiQL, run it ' +
      'and watch events arrive; from code, POST the subscription with `Accept: text/event-stream`.',
    args: {
      types: t.arg({ type: [EventTypeEnum], description: 'Only events of these types.' }),
      objectId: t.arg({ type: 'UUID', description: 'Only the events about this object.' }),
    },
    subscribe: (_root, { types, objectId }, ctx) => liveEvents(ctx, { types: types ?? null, objectId }),
    resolve: (event) => event,
  }),
}));
