import { readFileSync } from 'node:fs';
import { printSchema } from 'graphql';
import { expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';

it('schema.graphql matches the schema the code builds (run `npm run schema` after changing it)', () => {
  const committed = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
  expect(committed).toBe(`${printSchema(schema)}\n`);
});
