import { DomainError } from '../errors.ts';

/**
 * Runs `work`, failing with a TIMEOUT DomainError once `timeoutMs` have passed (or `remainingMs`, what
 * is left of the request's limit when it has run work before). Called inside the request's transaction,
 * so that failure rolls the transaction back; work still under way then finds its transaction gone and
 * ends in errors nobody waits for.
 */
export async function withinDeadline<T>(
  timeoutMs: number,
  work: () => Promise<T>,
  remainingMs = timeoutMs,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new DomainError(
            'TIMEOUT',
            `The request ran past its ${timeoutMs} ms execution limit and was rolled back; ask for less at a time.`,
          ),
        ),
      Math.max(0, remainingMs),
    );
  });
  try {
    return await Promise.race([work(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A request's execution limit: its length, and when it ends. */
export type Deadline = { timeoutMs: number; endsAt: number };

const deadlines = new WeakMap<object, Deadline>();

/**
 * The deadline of the request `key` (its Request): it starts the first time it is asked for, when
 * the request first waits or executes, so a wait for its turn (the cost gate) counts against it.
 */
export function requestDeadline(key: object | undefined, timeoutMs: number): Deadline {
  const existing = key && deadlines.get(key);
  if (existing) return existing;
  const deadline = { timeoutMs, endsAt: Date.now() + timeoutMs };
  if (key) deadlines.set(key, deadline);
  return deadline;
}
