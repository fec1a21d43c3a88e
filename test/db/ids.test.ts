import { validate, version } from 'uuid';
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/db/ids.ts';

describe('ids', () => {
  it('are version 7 UUIDs that only ever increase, however many fall in one millisecond', () => {
    const ids = Array.from({ length: 20_000 }, () => newId());

    for (const id of ids) {
      expect(validate(id)).toBe(true);
      expect(version(id)).toBe(7);
    }
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) expect((ids[i] as string) > (ids[i - 1] as string)).toBe(true);
  });

  it('carry the time they were made', () => {
    const before = Date.now();
    const id = newId();
    const millis = Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

    expect(millis).toBeGreaterThanOrEqual(before);
    expect(millis).toBeLessThanOrEqual(Date.now() + 1);
  });
});
