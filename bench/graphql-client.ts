/** The bench scripts' way into the service's GraphQL API: in-process (`app.fetch`), as one token. */
import type { createApp } from '../src/app.ts';

export type GraphQLData = Record<string, Record<string, { id: string } & Record<string, unknown>>>;

/**
 * A caller of `app`'s /graphql as the token `secret` in `environmentId`: answers `data`, and throws
 * with the errors when the answer has any, so a bench never measures a setup that failed.
 */
export function graphqlCaller(app: ReturnType<typeof createApp>, environmentId: string, secret: string) {
  return async (query: string, variables: Record<string, unknown> = {}): Promise<GraphQLData> => {
    const response = await app.fetch('http://bench/graphql', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${secret}`,
        'x-environment': environmentId,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data: GraphQLData; errors?: unknown[] };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data;
  };
}

/** The id of the object a create mutation's payload answers under `field`.`key`. */
export function createdId(data: GraphQLData, field: string, key: string): string {
  const object = data[field]?.[key];
  if (!object) throw new Error(`${field} returned no ${key}: ${JSON.stringify(data)}`);
  return object.id;
}
