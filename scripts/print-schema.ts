import { writeFileSync } from 'node:fs';
import { printSchema } from 'graphql';
import { schema } from '../src/graphql/schema.ts';

/** Writes schema.graphql, the committed SDL of the GraphQL API (a test fails when it is stale). */
writeFileSync(new URL('../schema.graphql', import.meta.url), `${printSchema(schema)}\n`);
console.log('wrote schema.graphql');
