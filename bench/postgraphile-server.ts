/**
 * PostGraphile v5 (the Amber preset) over the service's database: the peer `npm run bench:postgraphile`
 * measures the invoice page against. Like the service, each request's work is one transaction in the
 * application role `billing_app` with `app.environment_id` set from the `x-environment` header, so the
 * same row-level-security policies confine it. It checks no token: an API in front of it would (with a
 * JWT, say, without a database read).
 *
 *   DATABASE_URL=postgres://… PORT=… node bench/postgraphile-server.ts
 */
import { createServer, type IncomingMessage } from 'node:http';

// Loaded by a computed name on purpose: PostGraphile's typings augment the `graphql` module's types, and
// type-checking the service with them in view breaks its own (correct) uses of graphql's ExecutionResult.
const load = (name: string) => import(name);
const { postgraphile } = await load('postgraphile');
const { makePgService } = await load('postgraphile/adaptors/pg');
const { grafserv } = await load('postgraphile/grafserv/node');
const { PostGraphileAmberPreset } = await load('postgraphile/presets/amber');

const connectionString = process.env.DATABASE_URL;
if (!connectionString) throw new Error('DATABASE_URL is required');

const preset = {
  extends: [PostGraphileAmberPreset],
  pgServices: [
    makePgService({
      connectionString,
      schemas: ['public'],
      poolConfig: { max: Number(process.env.DB_POOL_MAX ?? 10) },
    }),
  ],
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
server.listen(Number(process.env.PORT ?? 5678), process.env.HOST ?? '127.0.0.1');
const stop = () => {
  server.close();
  void Promise.resolve(pgl.release()).then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
