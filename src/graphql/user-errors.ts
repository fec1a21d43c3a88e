import type { ObjectRef } from '@pothos/core';
import { DomainError, type DomainErrorCode } from '../errors.ts';
import { builder, type SchemaTypes } from './builder.ts';
import { reportMutationFailure } from './mutation-outcome.ts';

export type UserError = { field: string[] | null; message: string; code: DomainErrorCode };

export const UserErrorRef = builder.objectRef<UserError>('UserError').implement({
  description: 'A problem with the input or the state of the objects a mutation acted on.',
  fields: (t) => ({
    field: t.exposeStringList('field', {
      nullable: true,
      description: 'Path to the input field the problem is about, when there is one.',
    }),
    message: t.exposeString('message'),
    code: t.exposeString('code', {
      description: 'INVALID_INPUT, NOT_FOUND, DUPLICATE, CONFLICT or INVALID_REFERENCE.',
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
    fields: (t) => ({
      [key]: t.field({ type, nullable: true, resolve: (payload) => payload[key] as never }),
      userErrors: t.field({ type: [UserErrorRef], resolve: (payload) => payload.userErrors }),
    }),
  });
}
