import { Response } from '@whatwg-node/fetch';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { DomainError, type DomainErrorCode, IN_FLIGHT_RETRY_AFTER, toJsonPointer } from '../errors.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export type Problem = {
  type?: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  [extension: string]: unknown;
};

/** The one table from domain error codes to HTTP statuses. */
const STATUS_BY_CODE: Record<DomainErrorCode, { status: number; title: string }> = {
  INVALID_INPUT: { status: 400, title: 'Invalid request' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  FORBIDDEN: { status: 403, title: 'Forbidden' },
  DUPLICATE: { status: 409, title: 'Duplicate' },
  CONFLICT: { status: 409, title: 'Conflict' },
  INVALID_REFERENCE: { status: 422, title: 'Unprocessable request' },
  IDEMPOTENCY_MISMATCH: { status: 422, title: 'Idempotency key reused' },
  IDEMPOTENCY_IN_FLIGHT: { status: 409, title: 'Request in flight' },
  TIMEOUT: { status: 503, title: 'Service unavailable' },
  UNKNOWN_TOKEN: { status: 400, title: 'Invalid request' },
  MISSING_SEQUENCE: { status: 400, title: 'Invalid request' },
  MISSING_YEAR: { status: 400, title: 'Invalid request' },
  PATTERN_TOO_LONG: { status: 400, title: 'Invalid request' },
  TEST_CLOCK_LIVE_ENVIRONMENT: { status: 409, title: 'Conflict' },
  TEST_CLOCK_BACKWARDS: { status: 400, title: 'Invalid request' },
  TEST_CLOCK_TOO_FAR: { status: 400, title: 'Invalid request' },
  TEST_CLOCK_ADVANCING: { status: 409, title: 'Conflict' },
};

/**
 * REST responses (these and the router's) are @whatwg-node/fetch Responses: Yoga's Node adapter writes
 * their body out in one piece, where a global Response would be pumped through a stream.
 */
export function problemResponse(problem: Problem, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ type: 'about:blank', ...problem }), {
    status: problem.status,
    headers: { 'content-type': PROBLEM_CONTENT_TYPE, ...headers },
  });
}

/** Maps anything a handler threw to a problem response; unexpected errors reveal nothing. */
export function errorToProblem(
  error: unknown,
  instance: string,
): { problem: Problem; headers?: Record<string, string> } {
  if (error instanceof DomainError) {
    const { status, title } = STATUS_BY_CODE[error.code];
    const problem: Problem = { title, status, detail: error.message, instance, code: error.code };
    if (error.issues.length > 0) {
      problem.errors = error.issues.map((issue) => ({
        pointer: toJsonPointer(issue.path),
        detail: issue.message,
      }));
      if (error.code === 'INVALID_INPUT') {
        problem.detail = error.issues
          .map((issue) => `${toJsonPointer(issue.path) || '/'} ${issue.message}`)
          .join('; ');
      }
    }
    if (error.code === 'IDEMPOTENCY_IN_FLIGHT')
      return { problem, headers: { 'retry-after': IN_FLIGHT_RETRY_AFTER } };
    return { problem };
  }
  if (isDatabaseUnavailable(error)) {
    return {
      problem: {
        title: 'Service unavailable',
        status: 503,
        code: 'SERVICE_UNAVAILABLE',
        detail: 'The database is unreachable; retry shortly.',
        instance,
      },
      headers: { 'retry-after': '5' },
    };
  }
  return {
    problem: {
      title: 'Internal server error',
      status: 500,
      code: 'INTERNAL_SERVER_ERROR',
      detail: 'An unexpected error occurred.',
      instance,
    },
  };
}
