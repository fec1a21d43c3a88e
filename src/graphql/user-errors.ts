import type { ObjectRef } from '@pothos/core';
import { DOMAIN_ERROR_CODES, DomainError, type DomainErrorCode } from '../errors.ts';
import { builder, type SchemaTypes } from './builder.ts';
import { reportMutationFailure } from './mutation-outcome.ts';

export type UserError = { field: string[] | null; message: string; code: DomainErrorCode };

/** What each code means, as the enum's value descriptions (docs/errors.md has the table). */
export const USER_ERROR_CODE_DESCRIPTIONS: Record<DomainErrorCode, string> = {
  INVALID_INPUT: 'An input field breaks a rule; `field` names it. Correct the input and send again.',
  NOT_FOUND: 'An object the mutation names does not exist in this environment.',
  FORBIDDEN: 'The API token lacks the scope the mutation needs (the write scope).',
  DUPLICATE: 'An object with the same unique value (a handle, a name) exists already.',
  CONFLICT: 'The objects are not in a state that allows the change (e.g. editing a booked invoice).',
  INVALID_REFERENCE: 'An id in the input names an object that cannot be used here (e.g. another currency).',
  IDEMPOTENCY_MISMATCH: 'The Idempotency-Key was used before with a different request.',
  IDEMPOTENCY_IN_FLIGHT: 'A request with the same Idempotency-Key is still running; retry shortly.',
  TIMEOUT: 'The mutation ran past the execution deadline and was rolled back; retry.',
  UNKNOWN_TOKEN: 'An invoice number pattern names a token that does not exist.',
  MISSING_SEQUENCE: 'An invoice number pattern has no sequence token ({SEQ:n}).',
  MISSING_YEAR: 'An invoice number pattern resets yearly but has no year token.',
  PATTERN_TOO_LONG: 'An invoice number pattern is longer, or renders numbers longer, than allowed.',
  TEST_CLOCK_LIVE_ENVIRONMENT: 'Test clocks, and customers on them, exist only in test environments.',
  TEST_CLOCK_BACKWARDS: 'A test clock only moves forward: the time asked for is before its frozen time.',
  TEST_CLOCK_TOO_FAR:
    'One advance may move a test clock at most two billing periods (two years without any).',
  TEST_CLOCK_ADVANCING: 'The test clock is still advancing; wait for it to be ready.',
};

export const UserErrorCodeEnum = builder.enumType('UserErrorCode', {
  description: 'Why a mutation refused its input: the business outcomes a client can act on.',
  values: Object.fromEntries(
    DOMAIN_ERROR_CODES.map((code) => [
      code,
      { value: code, description: USER_ERROR_CODE_DESCRIPTIONS[code] },
    ]),
  ) as { [K in DomainErrorCode]: { value: K; description: string } },
});

export const UserErrorRef = builder.objectRef<UserError>('UserError').implement({
  description: 'A problem with the input or the state of the objects a mutation acted on.',
  fields: (t) => ({
    field: t.exposeStringList('field', {
      nullable: true,
      description: 'Path to the input field the problem is about, when there is one.',
    }),
    message: t.exposeString('message', { description: 'What is wrong, in English, for a developer.' }),
    code: t.expose('code', {
      type: UserErrorCodeEnum,
      description: 'What kind of problem it is: branch on this, not on the message.',
    }),
  }),
});

/** Runs a mutation; domain errors become `userErrors`, anything else stays an (masked) error. */
export async function withUserErrors<K extends string, T>(
  key: K,
  run: () => Promise<T>,
): Promise<{ [P in K]: T | null } & { userErrors: UserError[] }> {
  try {
    return { [key]: await run(), userErrors: [] } as never;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    reportMutationFailure();
    const userErrors =
      error.issues.length > 0
        ? error.issues.map((issue) => ({
            field: ['input', ...issue.path.map(String)],
            message: issue.message,
            code: error.code,
          }))
        : [{ field: null, message: error.message, code: error.code }];
    return { [key]: null, userErrors } as never;
  }
}

/** `<Name>Payload { <key>: <Type>, userErrors: [UserError!]! }`, the shape every mutation returns. */
export function payloadType<T extends object>(name: string, key: string, type: ObjectRef<SchemaTypes, T>) {
  return builder.objectRef<Record<string, unknown> & { userErrors: UserError[] }>(name).implement({
    description: `What the mutation answers: the ${type.name} it wrote, or the userErrors that refused it.`,
    fields: (t) => ({
      [key]: t.field({
        type,
        nullable: true,
        description: `The ${type.name} as the mutation left it; null when userErrors is not empty.`,
        resolve: (payload) => payload[key] as never,
      }),
      userErrors: t.field({
        type: [UserErrorRef],
        description: 'Why the mutation changed nothing; empty when it succeeded.',
        resolve: (payload) => payload.userErrors,
      }),
    }),
  });
}
