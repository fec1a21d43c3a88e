/**
 * The GraphQL framework alone: graphql-yoga 5 with graphql-jit (the service's versions and its compiled
 * queries), over node:http, serving the service's own schema (schema.graphql) with every root field
 * answered from memory: no database, no token, none of the service's plugins, scalars passed through as
 * they are. `npm run bench:graphql-floor` measures it beside the service and the baseline: what any
 * request through this stack costs before the service does anything of its own.
 *
 *   FLOOR_ANSWERS=<file: { rootField: answer, … }> PORT=… node bench/graphql-floor-server.ts
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { createSchema, createYoga } from 'graphql-yoga';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const answersFile = process.env.FLOOR_ANSWERS;
if (!answersFile) throw new Error('FLOOR_ANSWERS is required: a JSON file of the root fields’ answers');
const answers = JSON.parse(readFileSync(answersFile, 'utf8')) as Record<string, unknown>;

const typeDefs = readFileSync(path.join(HERE, '..', 'schema.graphql'), 'utf8');
const Query = Object.fromEntries(Object.entries(answers).map(([field, answer]) => [field, () => answer]));
// The service's framework settings (src/app.ts), without its plugins.
const yoga = createYoga({
  schema: createSchema({
    typeDefs,
    resolvers: { Query },
    resolverValidationOptions: { requireResolversForResolveType: 'ignore' },
  }),
  landingPage: false,
  graphiql: false,
  batching: false,
  cors: false,
  maxRequestBodySize: false,
  logging: false,
  plugins: [useGraphQlJit()],
});

const server = createServer(yoga).listen(Number(process.env.PORT ?? 5679), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
