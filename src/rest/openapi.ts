import { z } from 'zod';
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
} from 'zod-openapi';
import packageJson from '../../package.json' with { type: 'json' };
import { MAX_BODY_BYTES } from '../http/body.ts';
import { PROBLEM_CONTENT_TYPE } from '../http/problem.ts';
import type { Route } from './router.ts';

export const OPENAPI_PATH = '/openapi.json';

/** Contract 2.11: every member optional and nullable, any other member allowed. */
export const ProblemSchema = z
  .looseObject({
    type: z.string().nullish(),
    title: z.string().nullish(),
    status: z.int32().nullish(),
    detail: z.string().nullish(),
    instance: z.string().nullish(),
    code: z.string().nullish().meta({ description: 'Machine-readable error code, e.g. NOT_FOUND' }),
    errors: z
      .array(
        z.object({
          pointer: z.string().meta({ description: 'JSON Pointer to the offending field of the body' }),
          detail: z.string(),
        }),
      )
      .nullish()
      .meta({ description: 'One entry per invalid field (400 and 422)' }),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });

const problem = (
  id: string,
  description: string,
  headers?: ZodOpenApiResponseObject['headers'],
): ZodOpenApiResponseObject => ({
  id,
  description,
  ...(headers ? { headers } : {}),
  content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } },
});

/** The problem responses, by status, shared by every operation that can answer them. */
const PROBLEMS: Record<number, ZodOpenApiResponseObject> = {
  400: problem(
    'BadRequest',
    'A body that is not UTF-8 or not JSON, a field that breaks the schema, an unknown field, a path id that is not a UUID, ' +
      'or a missing or malformed x-environment header',
  ),
  401: problem(
    'Unauthorized',
    'The API token is missing, unknown or revoked',
    z.object({ 'www-authenticate': z.string().meta({ description: 'Bearer realm="billing"' }) }),
  ),
  403: problem('Forbidden', 'The API token is not granted the environment named in x-environment'),
  404: problem('NotFound', 'No resource has this id in the environment'),
  406: problem(
    'NotAcceptable',
    'The Accept header allows none of the media types the operation answers with',
  ),
  409: problem(
    'Conflict',
    'The request conflicts with the current state: a duplicate handle, a booked invoice, ' +
      'or a request with the same Idempotency-Key still in flight (then with Retry-After)',
    z.object({
      'retry-after': z
        .string()
        .optional()
        .meta({ description: 'Seconds to wait before retrying a request still in flight' }),
    }),
  ),
  413: problem('PayloadTooLarge', `The request body exceeds ${MAX_BODY_BYTES} bytes`),
  415: problem('UnsupportedMediaType', 'The request body is not sent as application/json'),
  422: problem(
    'UnprocessableContent',
    'The body is well-formed but names a missing or unusable resource, ' +
      'or reuses an Idempotency-Key with a different body',
  ),
  429: problem(
    'TooManyRequests',
    'The API token has spent its request budget for the current window, or the client address its budget of failed authentications',
    z.object({ 'retry-after': z.string().meta({ description: 'Seconds until the window resets' }) }),
  ),
  500: problem('InternalServerError', 'An unexpected error; the body reveals nothing internal'),
  503: problem(
    'ServiceUnavailable',
    'The database cannot be reached (retry after Retry-After seconds), or the request ran past its execution time limit (TIMEOUT)',
    z.object({ 'retry-after': z.string().meta({ description: 'Seconds to wait before retrying' }) }),
  ),
};

/** Which problems an operation can answer follows from its shape: path ids, a body, or neither. */
export function problemStatuses(
  route: Pick<Route, 'path' | 'body'> & { response?: Route['response'] },
): number[] {
  const statuses = [400, 401, 403];
  if (route.path.includes('{')) statuses.push(404);
  if (route.response?.alternatives) statuses.push(406);
  if (route.body) statuses.push(409, 413, 415, 422);
  else if (route.response?.conflicts) statuses.push(409);
  statuses.push(429, 500, 503);
  return statuses;
}

const EnvironmentHeader = z.uuid().meta({
  description: 'The environment the request acts on; the API token must be granted it',
  example: '01a1fcaa-8659-741f-b50e-c1ef91fb1d40',
  param: { id: 'Environment', in: 'header', name: 'x-environment' },
});

const IdempotencyKeyHeader = z
  .string()
  .min(1)
  .max(255)
  .optional()
  .meta({
    description:
      'Makes a retry safe: the same key (per environment and token, kept 24 h) replays the first answer ' +
      'with Idempotent-Replayed: true; another body with the same key is a 422, a duplicate still in flight a 409',
    param: { id: 'IdempotencyKey', in: 'header', name: 'Idempotency-Key' },
  });

const pathParams = (path: string) =>
  [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string).filter(Boolean);

const capitalize = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/** `GET /customers/{customerId}` -> `getCustomersByCustomerId`: stable, unique, readable in generated clients. */
function operationId(route: Route): string {
  const words = route.path
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment)?.[1];
      // A file name such as ubl.xml reads UblXml.
      return param ? `By${capitalize(param)}` : segment.split('.').map(capitalize).join('');
    });
  return route.method.toLowerCase() + words.join('');
}

function operation(route: Route): ZodOpenApiOperationObject {
  const params = pathParams(route.path);
  const { status, description, schema, alternatives = [], mediaType } = route.response;
  // Binary representations carry no JSON schema: the media type says what the bytes are. Text ones
  // (text/csv, XML) are strings.
  const content = {
    [mediaType ?? 'application/json']: { schema },
    ...Object.fromEntries(
      alternatives.map((mediaType) => [
        mediaType,
        mediaType.startsWith('text/') || /[/+]xml$/.test(mediaType) ? { schema: z.string() } : {},
      ]),
    ),
  };
  return {
    operationId: operationId(route),
    summary: route.summary,
    ...(route.beyondContract ? { 'x-beyond-contract': true } : {}),
    tags: [capitalize(route.path.split('/')[1] ?? '')],
    parameters: route.method === 'POST' ? [EnvironmentHeader, IdempotencyKeyHeader] : [EnvironmentHeader],
    ...(params.length > 0 || route.query
      ? {
          requestParams: {
            ...(params.length > 0
              ? { path: z.object(Object.fromEntries(params.map((name) => [name, z.uuid()]))) }
              : {}),
            ...(route.query ? { query: route.query } : {}),
          },
        }
      : {}),
    ...(route.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: route.body } } } }
      : {}),
    responses: {
      [status]: status === 204 ? { description } : { description, content },
      ...Object.fromEntries(problemStatuses(route).map((code) => [code, PROBLEMS[code]])),
    },
  };
}

/** The OpenAPI 3.1 document of the REST operations, built from the same zod schemas the handlers use. */
export function createOpenApiDocument(routes: readonly Route[]) {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation(route) };
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Billing gateway',
      version: packageJson.version,
      description: [
        'Invoicing and subscription billing. These are the documented REST operations; GraphQL at',
        '`/graphql` covers the whole domain.',
        '',
        'Every request sends an API token as `Authorization: Bearer <token>` (created with',
        '`npm run cli -- token create --env <uuid>`, or printed on the first embedded start) and the',
        'environment it acts on as `x-environment: <uuid>`. Monetary amounts are integers in the',
        "currency's minor unit. Errors are RFC 9457 problem details (`application/problem+json`).",
      ].join('\n'),
    },
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API token; it is stored only as a hash and can be revoked',
        },
      },
    },
  });
}

export type OpenApiDocument = ReturnType<typeof createOpenApiDocument>;
