import { Response } from '@whatwg-node/fetch';
import { GraphQLError } from 'graphql';
import { createGraphQLError, maskError as defaultMaskError } from 'graphql-yoga';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { DomainError, type DomainErrorCode, toJsonPointer } from '../errors.ts';

/** Domain errors that refuse the request itself carry its HTTP status; the others answer 200. */
const HTTP_STATUS: Partial<Record<DomainErrorCode, number>> = { FORBIDDEN: 403 };

/**
 * Yoga's error mask: domain errors (bad arguments, invalid input) are shown with their code and
 * fields; an unreachable database is a 503; everything else stays "Unexpected error."
 */
export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  const located = error instanceof GraphQLError ? { nodes: error.nodes, path: error.path } : {};
  if (original instanceof DomainError) {
    const status = HTTP_STATUS[original.code];
    return createGraphQLError(original.message, {
      ...located,
      extensions: {
        code: original.code,
        errors: original.issues.map((issue) => ({
          pointer: toJsonPointer(issue.path),
          detail: issue.message,
        })),
        ...(status ? { http: { status } } : {}),
      },
    });
  }
  if (isDatabaseUnavailable(original)) {
    return createGraphQLError('The database is unreachable; retry shortly.', {
      ...located,
      extensions: { code: 'SERVICE_UNAVAILABLE', http: { status: 503, headers: { 'retry-after': '5' } } },
    });
  }
  return defaultMaskError(error, message, isDev);
}

/**
 * A refusal of a GraphQL request before GraphQL sees it (authentication, rate limits, the cost budget
 * while it refills): the problem+json response keeps its status and headers, and its body also carries
 * `errors: [{ message, extensions: { code } }]`, so that a GraphQL client reads the code where it reads
 * every other one.
 */
export async function asGraphQLRefusal(response: Response): Promise<Response> {
  const problem = (await response.json()) as { title?: string; detail?: string; code?: string };
  const body = {
    ...problem,
    errors: [{ message: problem.detail ?? problem.title, extensions: { code: problem.code } }],
  };
  return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
}
