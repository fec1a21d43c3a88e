import { DomainError } from '../errors.ts';

export type ExecutionLimits = { timeoutMs: number; maxResponseBytes: number };

/** The defaults of the per-request limits on execution time and response size. */
export const EXECUTION_LIMITS: ExecutionLimits = { timeoutMs: 10_000, maxResponseBytes: 10 * 1024 * 1024 };

/**
 * Runs `work`, failing with a TIMEOUT DomainError once `timeoutMs` have passed. Called inside the
 * request's transaction, so that failure rolls the transaction back; work still under way then finds
 * its transaction gone and ends in errors nobody waits for.
 */
export async function withinDeadline<T>(timeoutMs: number, work: () => Promise<T>): Promise<T> {
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
      timeoutMs,
    );
  });
  try {
    return await Promise.race([work(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
