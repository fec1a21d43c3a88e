import { Response } from '@whatwg-node/fetch';
import { OPENAPI_PATH } from './openapi.ts';

export const INDEX_PATH = '/';

/**
 * What `GET /` answers: where the API and its documentation live, so a client exploring the server
 * finds its way rather than a 404. Needs no token; names no environment.
 */
export function indexResponse(origin: string, paths: { graphql: string; docs: string }): Response {
  const link = (path: string) => `${origin}${path}`;
  const body = {
    name: 'Billing gateway',
    graphql: link(paths.graphql),
    graphiql: `${link(paths.graphql)} (open in a browser)`,
    openapi: link(OPENAPI_PATH),
    docs: link(paths.docs),
    health: link('/health'),
    ready: link('/ready'),
    authentication:
      'Send `Authorization: Bearer <token>` and `x-environment: <environment id>` with every API request.',
  };
  return new Response(JSON.stringify(body, null, 2), {
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
}
