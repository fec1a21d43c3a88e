import { isDeepStrictEqual } from 'node:util';

/** A value as it is stored: JSON columns and dates compare by content, whatever object holds them. */
const stored = (value: unknown): unknown => (value === null ? null : JSON.parse(JSON.stringify(value)));

/**
 * Sets on `row` each field of `changes` (undefined: left as it is) whose value differs from the row's,
 * and tells whether any did. A write that changes nothing must leave `updatedAt`, the events and the
 * audit trail alone, so callers stop there when this answers false.
 */
export function applyChanges<T extends object>(
  row: T,
  changes: { [K in keyof T]?: T[K] | undefined },
): boolean {
  return Object.keys(changedFields(row, changes)).length > 0;
}

/**
 * As applyChanges, and answers what it set: each changed property with its new value (empty when
 * nothing changed), the `set` of a lean update (writeChange).
 */
export function changedFields<T extends object>(
  row: T,
  changes: { [K in keyof T]?: T[K] | undefined },
): Partial<T> {
  const set: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    const current = (row as Record<string, unknown>)[key];
    if (isDeepStrictEqual(stored(current), stored(value))) continue;
    Object.assign(row, { [key]: value });
    set[key] = value;
  }
  return set as Partial<T>;
}
