import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { assertUtf8, BodyError, readBodyBytes } from '../http/body.ts';

/**
 * What one GraphQL document may ask for. Depth fits the deepest honest query (a connection's node and
 * its nested objects) with room to spare; the cost limit bounds the fan-out of nested lists.
 */
export const GRAPHQL_LIMITS = {
  maxDepth: 10,
  maxAliases: 15,
  maxTokens: 2000,
  maxCost: 5000,
  maxDirectives: 50,
} as const;

/**
 * The REST body limit (1 MiB) for GraphQL POSTs too, whatever their content type: the body is read
 * under the limit before Yoga's own parser for that content type sees it. It must be UTF-8 (400
 * otherwise): every parser would decode it leniently, and the schema takes no file uploads.
 */
function useBodyLimit(): Plugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (request.method !== 'POST' || !requestParser) return;
      setRequestParser(async (original) => {
        let body: Uint8Array<ArrayBuffer>;
        try {
          body = new Uint8Array(assertUtf8(await readBodyBytes(original)));
        } catch (error) {
          if (!(error instanceof BodyError)) throw error;
          throw createGraphQLError(error.message, { extensions: { http: { status: error.status } } });
        }
        // Yoga's own Request class: its parser reads that body at once, a global Request's through a stream.
        return requestParser(
          new fetchAPI.Request(original.url, { method: 'POST', headers: original.headers, body }),
        );
      });
    },
  };
}

/**
 * Document limits (graphql-armor, which also hides field suggestions from error messages) and CSRF
 * prevention: a browser may not send a GraphQL request without a preflight, so a GET or a form/text
 * POST must carry the `x-graphql-yoga-csrf` header (JSON POSTs are preflighted already).
 */
export function graphqlLimitPlugins() {
  return [
    useCSRFPrevention(),
    useBodyLimit(),
    EnvelopArmorPlugin({
      maxDepth: { n: GRAPHQL_LIMITS.maxDepth },
      maxAliases: { n: GRAPHQL_LIMITS.maxAliases },
      maxTokens: { n: GRAPHQL_LIMITS.maxTokens },
      costLimit: { maxCost: GRAPHQL_LIMITS.maxCost },
      maxDirectives: { n: GRAPHQL_LIMITS.maxDirectives },
    }),
  ];
}
