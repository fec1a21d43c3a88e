import { readFile } from 'node:fs/promises';
import type { Plugin } from 'graphql-yoga';
import { StaticAssets } from '../pages/assets.ts';
import { htmlResponse } from '../pages/html.ts';
import { INDEX_PATH, indexResponse } from './index-page.ts';
import { createOpenApiDocument, OPENAPI_PATH } from './openapi.ts';
import type { Route } from './router.ts';

export const DOCS_PATH = '/docs';

const JS = 'text/javascript; charset=utf-8';
const fromSwaggerUi = (file: string) => () =>
  readFile(new URL(import.meta.resolve(`swagger-ui-dist/${file}`)));

/**
 * Swagger UI's standalone build, served from node_modules so the page works offline, and the script that
 * starts it (a file of its own: the page's policy refuses inline scripts).
 */
const BUNDLE = `${DOCS_PATH}/swagger-ui-bundle.js`;
const STYLES = `${DOCS_PATH}/swagger-ui.css`;
const ICON = `${DOCS_PATH}/favicon.png`;
const START = `${DOCS_PATH}/start.js`;
const assets = new StaticAssets([
  { path: BUNDLE, contentType: JS, load: fromSwaggerUi('swagger-ui-bundle.js') },
  { path: STYLES, contentType: 'text/css; charset=utf-8', load: fromSwaggerUi('swagger-ui.css') },
  { path: ICON, contentType: 'image/png', load: fromSwaggerUi('favicon-32x32.png') },
  {
    path: START,
    contentType: JS,
    load: () => readFile(new URL('./api-reference.client.js', import.meta.url)),
  },
]);

export const API_REFERENCE_PATHS = [INDEX_PATH, OPENAPI_PATH, DOCS_PATH, ...assets.paths] as const;

async function renderPage(): Promise<string> {
  const [bundle, css, icon, start] = await Promise.all(
    [BUNDLE, STYLES, ICON, START].map((path) => assets.url(path)),
  );
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Billing gateway API reference</title>
    <link rel="icon" href="${icon}" />
    <link rel="stylesheet" href="${css}" />
  </head>
  <body>
    <div id="swagger-ui" data-openapi="${OPENAPI_PATH}"></div>
    <script src="${bundle}"></script>
    <script src="${start}"></script>
  </body>
</html>
`;
}

/**
 * Serves the index at /, the OpenAPI document at /openapi.json and the interactive reference at /docs;
 * none needs auth.
 */
export function useApiReference(routes: readonly Route[], graphqlPath: string): Plugin {
  const document = createOpenApiDocument(routes);
  return {
    async onRequest({ request, url, endResponse }) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return;
      if (url.pathname === INDEX_PATH) {
        return endResponse(indexResponse(url.origin, { graphql: graphqlPath, docs: DOCS_PATH }));
      }
      if (url.pathname === OPENAPI_PATH) {
        // The server as the client reached it, so "Try it out" in /docs calls this server.
        const body = JSON.stringify({ ...document, servers: [{ url: url.origin }] });
        return endResponse(
          new Response(body, { headers: { 'content-type': 'application/json; charset=utf-8' } }),
        );
      }
      if (url.pathname === DOCS_PATH || url.pathname === `${DOCS_PATH}/`) {
        return endResponse(htmlResponse(await renderPage()));
      }
      const asset = await assets.respond(request, url);
      if (asset) endResponse(asset);
    },
  };
}
