import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();

describe('compiled queries with scalar arguments', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment('Quiet');
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('print nothing to stderr, whether the UUID comes as a variable or a literal', async () => {
    // given stderr watched (graphql-jit warned there about scalars whose parseLiteral takes variables)
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      written.push(args.map(String).join(' '));
    });
    const id = randomUUID();

    // when queries with a UUID variable and a UUID literal are compiled and run
    const byVariable = await t.graphql('query ($id: UUID!) { customer(id: $id) { id } }', { id }, { env });
    const byLiteral = await t.graphql(`{ customer(id: "${id.toUpperCase()}") { id } }`, {}, { env });

    // then they answer, and nothing was printed
    expect(byVariable.body).toEqual({ data: { customer: null } });
    expect(byLiteral.body).toEqual({ data: { customer: null } });
    expect(written).toEqual([]);
  });
});
