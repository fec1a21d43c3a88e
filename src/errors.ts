/** Where in the input a problem is: object keys and array indexes, as in a JSON Pointer. */
export type FieldPath = (string | number)[];
export type FieldIssue = { path: FieldPath; message: string };

/**
 * Every code a service may refuse with. GraphQL mutations answer them as the `UserErrorCode` enum in
 * `userErrors`; REST maps each to an HTTP status (http/problem.ts). docs/errors.md describes them all.
 */
export const DOMAIN_ERROR_CODES = [
  'INVALID_INPUT',
  'NOT_FOUND',
  'FORBIDDEN',
  'DUPLICATE',
  'CONFLICT',
  'INVALID_REFERENCE',
  'IDEMPOTENCY_MISMATCH',
  'IDEMPOTENCY_IN_FLIGHT',
  'TIMEOUT',
  // Number patterns (invoice numbering series).
  'UNKNOWN_TOKEN',
  'MISSING_SEQUENCE',
  'MISSING_YEAR',
  'PATTERN_TOO_LONG',
  // Test clocks.
  'TEST_CLOCK_LIVE_ENVIRONMENT',
  'TEST_CLOCK_BACKWARDS',
  'TEST_CLOCK_TOO_FAR',
  'TEST_CLOCK_ADVANCING',
] as const;

export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number];

/**
 * The one error type services throw for anything a caller can cause. REST turns the code into an
 * HTTP status through one table (http/problem.ts); GraphQL turns it into `userErrors`.
 */
export class DomainError extends Error {
  readonly code: DomainErrorCode;
  readonly issues: FieldIssue[];

  constructor(code: DomainErrorCode, message: string, issues: FieldIssue[] = []) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.issues = issues;
  }

  static notFound(what: string, id: string): DomainError {
    return new DomainError('NOT_FOUND', `${what} ${id} does not exist`);
  }

  static invalidInput(issues: FieldIssue[]): DomainError {
    return new DomainError('INVALID_INPUT', 'The request has invalid fields', issues);
  }

  static onField(code: DomainErrorCode, path: FieldPath, message: string): DomainError {
    return new DomainError(code, message, [{ path, message }]);
  }
}

export const toJsonPointer = (path: FieldPath): string =>
  path.map((segment) => `/${String(segment).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/**
 * `Retry-After` (seconds) on the 409 for an IDEMPOTENCY_IN_FLIGHT duplicate: most requests finish within
 * it, and a client that retries later gets the stored response rather than another 409.
 */
export const IN_FLIGHT_RETRY_AFTER = '1';
