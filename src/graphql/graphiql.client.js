// Starts GraphiQL on the page GET /graphql serves. The server's options arrive as a JSON data block (never
// run), and a link's `?headers=` is read here as text: no part of a URL is ever written into the page.
const { graphiql, workers } = JSON.parse(document.getElementById('graphiql-options').textContent);
const linked = new URLSearchParams(window.location.search).get('headers');
if (linked !== null) graphiql.headers = linked;

// Monaco's workers are files beside this one: blob: workers would need a looser policy.
self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_moduleId, label) => workers[label] };

// GraphiQL's script comes after this one; DOMContentLoaded waits for it.
window.addEventListener('DOMContentLoaded', () => {
  window.YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), graphiql);
});
