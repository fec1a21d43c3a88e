/**
 * PostGraphile v5 (the Amber preset) over the service's database: the peer `npm run bench` measures the
 * invoice page and customer(id) against. Like the service, each request's work is one transaction in the
 * application role `billing_app` with `app.environment_id` set from the `x-environment` header, so the
 * same row-level-security policies confine it. It checks no token: an API in front of it would (with a
 * JWT, say, without a database read).
 *
 * When it builds its schema PostGraphile reports a "Recoverable error … type naming conflict … 'Subscription'":
 * the service's `subscription` table wants the name GraphQL gives its subscription root type, and PostGraphile
 * drops one of the two from its schema. The bench asks for neither: only invoices, their items, settlements
 * and customers.
 *
 *   DATABASE_URL=postgres://… PORT=… node bench/postgraphile-server.ts
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';

/**
 * PostGraphile's HTTP server over the database, listening once its schema is built: the bench starts it
 * as its own process (below) and once in-process to count the statements of a request.
 */
export async function startPostgraphile(
  connectionString: string,
  poolMax: number,
): Promise<{ server: Server; release: () => Promise<void> }> {
  // Loaded by a computed name on purpose: PostGraphile's typings augment the `graphql` module's types, and
  // type-checking the service with them in view breaks its own (correct) uses of graphql's ExecutionResult.
  const load = (name: string) => import(name);
  const { postgraphile } = await load('postgraphile');
  const { makePgService } = await load('postgraphile/adaptors/pg');
  const { grafserv } = await load('postgraphile/grafserv/node');
  const { PostGraphileAmberPreset } = await load('postgraphile/presets/amber');
  const preset = {
    extends: [PostGraphileAmberPreset],
    pgServices: [makePgService({ connectionString, schemas: ['public'], poolConfig: { max: poolMax } })],
    grafast: {
      context(requestContext: { node?: { req: IncomingMessage } }) {
        const request = requestContext.node?.req;
        const environment = String(request?.headers['x-environment'] ?? '');
        return { pgSettings: { role: 'billing_app', 'app.environment_id': environment } };
      },
    },
    grafserv: { graphqlPath: '/graphql', graphiql: false },
  };
  const pgl = postgraphile(preset);
  const serv = pgl.createServ(grafserv);
  const server = createServer();
  // Listen only once the schema is built and the handler attached: earlier requests would find no handler.
  await serv.addTo(server);
  return { server, release: async () => void (await pgl.release()) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const connectionString = process.env.DATABASE_URL;
  if (!connectionString) throw new Error('DATABASE_URL is required');
  const { server, release } = await startPostgraphile(
    connectionString,
    Number(process.env.DB_POOL_MAX ?? 10),
  );
  server.listen(Number(process.env.PORT ?? 5678), process.env.HOST ?? '127.0.0.1');
  const stop = () => {
    server.close();
    void release().then(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
