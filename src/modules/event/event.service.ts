import type { EntityName } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { auditContextOf } from '../../audit/audit.context.ts';
import { type AuditedChange, auditRow, isAudited } from '../../audit/audit.subscriber.ts';
import { AuditEventSchema } from '../../audit/audit-event.entity.ts';
import type { ServiceContext } from '../../context.ts';
import type { ConstraintErrors } from '../../db/flush.ts';
import {
  insertRows,
  newRow,
  updateRow,
  updateRows,
  type WritePart,
  writeParts,
} from '../../db/lean-write.ts';
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
  return em.create(EventSchema, eventRow(environmentId, event));
}

/** The event's row, whichever path writes it (recordEvent's flush or writeChange). */
function eventRow(environmentId: string, event: EventInput): Omit<Event, 'id' | 'createdAt'> {
  return {
    environmentId,
    type: event.type,
    objectType: event.objectType,
    objectId: event.objectId,
    // A plain JSON copy: later changes to the object do not reach the event.
    data: JSON.parse(JSON.stringify(event.data)) as Record<string, unknown>,
  };
}

type TenantRow = { id: string; environmentId: string };
/** An entity's schema (defineEntity): its metadata names the audit events' objectType. */
type Schema = { meta: { className: string } };
const nameOf = (schema: Schema) => schema as unknown as EntityName<TenantRow>;

/** A change written without the unit of work (see writeChange). */
export type LeanChange = {
  /** New rows (made with newRow), per entity, a parent's before its children's. */
  created?: readonly { entity: Schema; rows: readonly TenantRow[] }[];
  /** Changed rows: the row's key and the properties set, with their new values. */
  updated?: readonly { entity: Schema; key: TenantRow; set: Record<string, unknown> }[];
  /**
   * Rows of `created` changed again by the same work before it was written (a billing batch's drafts,
   * booked first): written as they end up, with the `update` audit event of each change, as the unit of
   * work's second flush would have written it.
   */
  changedOnCreate?: readonly { entity: Schema; key: TenantRow; fields: readonly string[] }[];
  /** New rows that no path audits (the journal's, which em.insert writes). */
  unaudited?: readonly { entity: Schema; rows: readonly TenantRow[] }[];
  /** The events the change records, as recordEvent records them. */
  events?: readonly EventInput[];
};

/**
 * Writes a change outside MikroORM's unit of work, for the hot write paths: its rows, the audit event
 * of each row (the rows AuditSubscriber writes for a flush: auditRow) and its events (recordEvent's
 * rows, whose trigger enqueues their delivery), all in one statement in `em`'s transaction: they commit
 * or fail together, and no lean write can leave its audit trail or events out. A violated constraint
 * becomes the domain error `errors` names, as with flushOrFail.
 */
export async function writeChange(
  em: EntityManager,
  environmentId: string,
  change: LeanChange,
  errors: ConstraintErrors = {},
): Promise<void> {
  const context = auditContextOf(em);
  const occurredAt = new Date();
  const parts: WritePart[] = [];
  const audits: AuditedChange[] = [];
  for (const { entity, rows } of change.created ?? []) {
    if (rows.length === 0) continue;
    parts.push(insertRows(em, nameOf(entity), rows));
    if (!isAudited(entity)) continue;
    for (const row of rows) {
      audits.push({
        environmentId: row.environmentId,
        action: 'create',
        objectType: entity.meta.className,
        objectId: row.id,
        changedFields: [],
      });
    }
  }
  // Rows of one entity changed in the same properties go in one update.
  const alike = new Map<string, NonNullable<LeanChange['updated']>[number][]>();
  for (const update of change.updated ?? []) {
    const shape = `${update.entity.meta.className}:${Object.keys(update.set).sort().join(',')}`;
    alike.set(shape, [...(alike.get(shape) ?? []), update]);
  }
  for (const group of alike.values()) {
    const [{ entity, key, set }] = group as [NonNullable<LeanChange['updated']>[number]];
    parts.push(
      group.length === 1
        ? updateRow(em, nameOf(entity), key, set)
        : updateRows(em, nameOf(entity), Object.keys(set), group),
    );
  }
  const updates = [
    ...(change.updated ?? []).map(({ entity, key, set }) => ({ entity, key, fields: Object.keys(set) })),
    ...(change.changedOnCreate ?? []),
  ];
  for (const { entity, key, fields } of updates) {
    if (!isAudited(entity)) continue;
    audits.push({
      environmentId: key.environmentId,
      action: 'update',
      objectType: entity.meta.className,
      objectId: key.id,
      changedFields: fields,
    });
  }
  for (const { entity, rows } of change.unaudited ?? []) {
    if (rows.length > 0) parts.push(insertRows(em, nameOf(entity), rows));
  }
  if (audits.length > 0) {
    const rows = audits.map((audit) => newRow(em, AuditEventSchema, auditRow(context, occurredAt, audit)));
    parts.push(insertRows(em, AuditEventSchema, rows));
  }
  const events = (change.events ?? []).map((event) =>
    newRow(em, EventSchema, eventRow(environmentId, event)),
  );
  if (events.length > 0) parts.push(insertRows(em, EventSchema, events));
  await writeParts(em, parts, errors);
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
