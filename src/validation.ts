import { z } from 'zod';
import { DomainError, type FieldIssue, type FieldPath } from './errors.ts';

/** A UUID in any case, as the lowercase form ids are stored, cached and compared in (RFC 9562: case-insensitive). */
export const Uuid = z.uuid().transform((id) => id.toLowerCase());

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
  return (
    z
      .string()
      .trim()
      .refine((value) => length(value) >= min, {
        error: min === 1 ? 'must not be empty' : `must be at least ${min} characters long`,
      })
      .refine((value) => length(value) <= max, { error: `must be at most ${max} characters long` })
      // The refinements are invisible to JSON Schema: state the limits (in code points, after trimming).
      .meta({ minLength: min, maxLength: max })
  );
}

/** How deep a request's JSON may nest; the deepest honest body (a price's tiers) needs 5 levels. */
export const MAX_INPUT_DEPTH = 32;
const MAX_INPUT_ISSUES = 100;

/** Why PostgreSQL cannot store `text` as sent, or undefined when it can. */
function unstorableText(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (!text.isWellFormed()) return 'must be Unicode text, without unpaired surrogates';
  return undefined;
}

const isContainer = (value: unknown): value is object =>
  Array.isArray(value) ||
  (typeof value === 'object' &&
    value !== null &&
    [Object.prototype, null].includes(Object.getPrototypeOf(value)));

/**
 * Refuses (INVALID_INPUT) request input that no schema is asked about and that would otherwise fail
 * unexpectedly: nesting deeper than MAX_INPUT_DEPTH, which would exhaust the stack of recursive
 * walkers such as the Idempotency-Key fingerprint, and strings or field names PostgreSQL cannot store
 * as sent (a NUL character is an error there; an unpaired surrogate would be silently replaced).
 * Walks with an explicit stack, so no input is too deep for the check itself.
 */
/**
 * `__proto__` is a valid JSON key that every JavaScript object copy drops (assigning it sets the
 * prototype), so a record field such as `pricing` would lose it without a word: refuse it instead.
 */
const reservedKeyProblem = (key: string) =>
  key === '__proto__' ? 'is reserved: "__proto__" cannot be kept as a key' : undefined;

export function assertStorableInput(value: unknown, path: FieldPath = []): void {
  const issues: FieldIssue[] = [];
  const pending: { value: unknown; path: FieldPath }[] = [{ value, path }];
  for (let node = pending.pop(); node && issues.length < MAX_INPUT_ISSUES; node = pending.pop()) {
    if (typeof node.value === 'string') {
      const problem = unstorableText(node.value);
      if (problem) issues.push({ path: node.path, message: problem });
      continue;
    }
    if (!isContainer(node.value)) continue;
    if (node.path.length - path.length >= MAX_INPUT_DEPTH) {
      issues.push({ path: node.path, message: `must not nest deeper than ${MAX_INPUT_DEPTH} levels` });
      continue;
    }
    const array = Array.isArray(node.value);
    const members = Object.entries(node.value);
    // Last member first onto the stack, so members are checked in document order.
    for (let index = members.length - 1; index >= 0; index--) {
      const [key, member] = members[index] as [string, unknown];
      const memberPath = [...node.path, array ? index : key];
      const problem = array ? undefined : (reservedKeyProblem(key) ?? unstorableText(key));
      if (problem) issues.push({ path: memberPath, message: `the field name ${problem}` });
      pending.push({ value: member, path: memberPath });
    }
  }
  if (issues.length > 0) throw DomainError.invalidInput(issues);
}
