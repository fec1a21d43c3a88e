/// <reference types="vite/client" />
import type { FuzzFixtures, GraphqlCase, ModuleCases, RestCase } from './cases.ts';

/**
 * What each module's tests register for the suite-wide tests: the isolation matrix's cases for its REST
 * operations and GraphQL root fields, and the REST fuzzer's example bodies and existing path ids. Each
 * module keeps them in `test/modules/<domain>/<domain>.cases.ts`; this file gathers every such file, so
 * a new module's cases need no line anywhere else. An operation without cases fails those tests.
 */

const registered = Object.values(
  import.meta.glob<ModuleCases>('../modules/*/*.cases.ts', { eager: true, import: 'cases' }),
);

/** Every module's cases merged, by operation. */
export const moduleCases = {
  rest: Object.assign({}, ...registered.map((m) => m.isolation.rest ?? {})) as Record<string, RestCase[]>,
  graphql: Object.assign({}, ...registered.map((m) => m.isolation.graphql ?? {})) as Record<
    string,
    GraphqlCase[]
  >,
  fuzzBodies: Object.assign({}, ...registered.map((m) => m.fuzz?.bodies ?? {})) as Record<
    string,
    (fixtures: FuzzFixtures) => Record<string, unknown>
  >,
  existingIds: Object.assign({}, ...registered.map((m) => m.fuzz?.existingIds ?? {})) as Record<
    string,
    (fixtures: FuzzFixtures) => string
  >,
};
