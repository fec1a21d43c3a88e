import { AsyncLocalStorage } from 'node:async_hooks';

const outcomes = new AsyncLocalStorage<{ failed: boolean }>();

/**
 * Runs a mutation's execution and tells whether any of its fields answered with userErrors, whatever
 * the client selected: such a mutation failed (the GraphQL twin of a 4xx) even though its result
 * carries no errors.
 */
export async function observeMutation<T>(execute: () => Promise<T>): Promise<{ result: T; failed: boolean }> {
  const outcome = { failed: false };
  const result = await outcomes.run(outcome, execute);
  return { result, failed: outcome.failed };
}

/** Called where a domain error becomes userErrors. */
export function reportMutationFailure(): void {
  const outcome = outcomes.getStore();
  if (outcome) outcome.failed = true;
}
