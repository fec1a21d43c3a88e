import { z } from 'zod';
import { DomainError, type FieldIssue } from './errors.ts';

/** Flattens zod issues into one issue per field; an unknown key becomes an issue at that key. */
export function fieldIssues(issues: readonly z.core.$ZodIssue[]): FieldIssue[] {
  return issues.flatMap((issue): FieldIssue[] => {
    const path = issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment));
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: [...path, key], message: 'is not a field of this request' }));
    }
    return [{ path, message: issue.message }];
  });
}

/** Parses `input` with `schema`, or throws an INVALID_INPUT domain error naming every bad field. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw DomainError.invalidInput(fieldIssues(result.error.issues));
  return result.data;
}

/** Drops the keys a client may echo back from a response; the contract says they are ignored. */
export function withoutReadOnly(body: unknown, readOnly: readonly string[]): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  return Object.fromEntries(Object.entries(body).filter(([key]) => !readOnly.includes(key)));
}

/**
 * A trimmed string of `min` to `max` characters, counted as PostgreSQL counts `varchar(n)`: code
 * points, so an emoji is one character (zod's own `max` counts UTF-16 units and would call it two).
 */
export function boundedText(min: number, max: number) {
  const length = (value: string) => [...value].length;
  return z
    .string()
    .trim()
    .refine((value) => length(value) >= min, {
      error: min === 1 ? 'must not be empty' : `must be at least ${min} characters long`,
    })
    .refine((value) => length(value) <= max, { error: `must be at most ${max} characters long` });
}
