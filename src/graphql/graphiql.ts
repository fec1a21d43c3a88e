import { readFile } from 'node:fs/promises';
import { type Plugin, shouldRenderGraphiQL } from 'graphql-yoga';
import { StaticAssets } from '../pages/assets.ts';
import { htmlResponse, jsonForHtml } from '../pages/html.ts';

const ASSETS_PATH = '/graphiql';
const JS = 'text/javascript; charset=utf-8';

/** GraphiQL's build as strings, 9 MB of them: imported when first asked for. */
const build = () => import('@graphql-yoga/render-graphiql/graphiql');

const SCRIPT = `${ASSETS_PATH}/graphiql.js`;
const STYLES = `${ASSETS_PATH}/graphiql.css`;
const ICON = `${ASSETS_PATH}/favicon.ico`;
const START = `${ASSETS_PATH}/start.js`;
/** Monaco's workers by the label it asks for them with. */
const WORKERS = {
  editorWorkerService: `${ASSETS_PATH}/editor.worker.js`,
  json: `${ASSETS_PATH}/json.worker.js`,
  graphql: `${ASSETS_PATH}/graphql.worker.js`,
} as const;

/**
 * Yoga's GraphiQL page inlines all of this into one 9 MB page; served as files instead, each is compressed
 * and cached on its own, and the page needs no inline script.
 */
const assets = new StaticAssets([
  { path: SCRIPT, contentType: JS, load: async () => (await build()).js },
  { path: STYLES, contentType: 'text/css; charset=utf-8', load: async () => (await build()).css },
  {
    path: ICON,
    contentType: 'image/x-icon',
    load: async () => Buffer.from((await build()).favicon.replace(/^data:[^,]*;base64,/, ''), 'base64'),
  },
  {
    path: WORKERS.editorWorkerService,
    contentType: JS,
    load: async () => (await build()).editorWorkerService,
  },
  { path: WORKERS.json, contentType: JS, load: async () => (await build()).jsonWorker },
  { path: WORKERS.graphql, contentType: JS, load: async () => (await build()).graphqlWorker },
  { path: START, contentType: JS, load: () => readFile(new URL('./graphiql.client.js', import.meta.url)) },
]);

export const GRAPHIQL_ASSET_PATHS = assets.paths;

async function renderPage(headers: Record<string, string>): Promise<string> {
  const url = (path: string) => assets.url(path);
  const [script, styles, icon, start] = await Promise.all([SCRIPT, STYLES, ICON, START].map(url));
  const workers = Object.fromEntries(
    await Promise.all(Object.entries(WORKERS).map(async ([label, path]) => [label, await url(path)])),
  );
  const options = {
    graphiql: {
      title: 'Billing gateway',
      headers: JSON.stringify(headers, null, 2),
      shouldPersistHeaders: true,
      // Subscriptions too go as a JSON POST (with `Accept: text/event-stream`): GraphiQL would send them
      // as a GET, which the CSRF check refuses without its header.
      method: 'POST',
    },
    workers,
  };
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Billing gateway</title>
    <link rel="icon" href="${icon}" />
    <link rel="stylesheet" href="${styles}" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript.</noscript>
    <div id="root"></div>
    <script type="application/json" id="graphiql-options">${jsonForHtml(options)}</script>
    <script src="${start}"></script>
    <script src="${script}"></script>
  </body>
</html>
`;
}

/**
 * GraphiQL at `path` for a browser (GET accepting HTML), its files under /graphiql/. Nothing from the
 * request is written into the page: the script reads a link's `?headers=` itself, as text.
 */
export function useGraphiQL({ path, headers }: { path: string; headers: Record<string, string> }): Plugin {
  return {
    async onRequest({ request, url, endResponse }) {
      if ((url.pathname === path || url.pathname === `${path}/`) && shouldRenderGraphiQL(request)) {
        return endResponse(htmlResponse(await renderPage(headers)));
      }
      if (request.method !== 'GET') return;
      const asset = await assets.respond(request, url);
      if (asset) endResponse(asset);
    },
  };
}
