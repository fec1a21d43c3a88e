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
  let changed = false;
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    const current = (row as Record<string, unknown>)[key];
    if (isDeepStrictEqual(stored(current), stored(value))) continue;
    Object.assign(row, { [key]: value });
    changed = true;
  }
  return changed;
}
