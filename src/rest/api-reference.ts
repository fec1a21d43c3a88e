import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Plugin } from 'graphql-yoga';
import { createOpenApiDocument, OPENAPI_PATH } from './openapi.ts';
import type { Route } from './router.ts';

export const DOCS_PATH = '/docs';
const BUNDLE_PATH = `${DOCS_PATH}/scalar.js`;
export const API_REFERENCE_PATHS = [OPENAPI_PATH, DOCS_PATH, BUNDLE_PATH] as const;

/**
 * Scalar's self-contained browser bundle, served from node_modules so the page works offline.
 * Everything that would reach scalar.com (fonts, telemetry, the AI agent, MCP) is off.
 */
const SCALAR_CONFIG = {
  url: OPENAPI_PATH,
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  documentDownloadType: 'json',
  persistAuth: false,
  authentication: { preferredSecurityScheme: 'bearerAuth' },
};

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Billing gateway API reference</title>
  </head>
  <body>
    <div id="app"></div>
    <script src="${BUNDLE_PATH}"></script>
    <script>Scalar.createApiReference('#app', ${JSON.stringify(SCALAR_CONFIG)});</script>
  </body>
</html>
`;

type Bundle = { plain: Buffer; gzipped: Buffer };
let bundle: Promise<Bundle> | undefined;

/** Read and compressed once per process: 4 MB on every page load would be slow over a real network. */
function loadBundle(): Promise<Bundle> {
  bundle ??= (async () => {
    const entry = import.meta.resolve('@scalar/api-reference');
    const plain = await readFile(new URL('./browser/standalone.js', entry));
    return { plain, gzipped: await promisify(gzip)(plain) };
  })();
  return bundle;
}

/** Serves the OpenAPI document at /openapi.json and the interactive reference at /docs; neither needs auth. */
export function useApiReference(routes: readonly Route[]): Plugin {
  const document = createOpenApiDocument(routes);
  return {
    async onRequest({ request, url, endResponse }) {
      if (request.method !== 'GET') return;
      if (url.pathname === OPENAPI_PATH) {
        // The server as the client reached it, so examples and "Test Request" in /docs call this server.
        const body = JSON.stringify({ ...document, servers: [{ url: url.origin }] });
        return endResponse(
          new Response(body, { headers: { 'content-type': 'application/json; charset=utf-8' } }),
        );
      }
      if (url.pathname === DOCS_PATH || url.pathname === `${DOCS_PATH}/`) {
        return endResponse(new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } }));
      }
      if (url.pathname === BUNDLE_PATH) {
        const { plain, gzipped } = await loadBundle();
        const gzipOk = /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '');
        return endResponse(
          new Response(new Uint8Array(gzipOk ? gzipped : plain), {
            headers: {
              'content-type': 'text/javascript; charset=utf-8',
              'cache-control': 'public, max-age=3600',
              vary: 'accept-encoding',
              ...(gzipOk ? { 'content-encoding': 'gzip' } : {}),
            },
          }),
        );
      }
    },
  };
}
