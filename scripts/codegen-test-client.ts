import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { GENERATED, generateClient } from '../test/graphql-frontend/codegen.ts';

// Rewrites the typed client of the GraphQL frontend tests (a test checks it matches the schema).
await mkdir(dirname(GENERATED), { recursive: true });
await writeFile(GENERATED, await generateClient());
console.log(`wrote ${GENERATED}`);
