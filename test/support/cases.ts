import type { MarkedEnvironment, Shared, Target } from '../security/fixtures.ts';

/** The shapes of what each module's `test/modules/<domain>/<domain>.cases.ts` registers (see module-cases.ts). */

/** A request that names nothing runs once; one with a `target` runs with an own, a foreign and a random one. */
export type RestCase = {
  target?: Target;
  request: (ref: string, own: Shared, env: MarkedEnvironment) => { path: string; body?: unknown };
};
export type GraphqlCase = { target?: Target; args: (ref: string, own: Shared) => Record<string, unknown> };

/** The objects the fuzzer creates once and names in paths and bodies. */
export type FuzzFixtures = {
  customerId: string;
  productId: string;
  priceId: string;
  invoiceId: string;
  subscriptionId: string;
  accountIds: [string, string, string, string];
  accountSetId: string;
};

export type ModuleCases = {
  /** By `METHOD /path` and by `Query.field` / `Mutation.field`. */
  isolation: { rest?: Record<string, RestCase[]>; graphql?: Record<string, GraphqlCase[]> };
  fuzz?: {
    /** A valid body per `METHOD /path` that takes one; the fuzzer mutates it into near-valid ones. */
    bodies?: Record<string, (fixtures: FuzzFixtures) => Record<string, unknown>>;
    /** An existing id per path parameter name. */
    existingIds?: Record<string, (fixtures: FuzzFixtures) => string>;
  };
};

/** A page of the first 20 (more would only add cost: an environment of the matrix holds a few of each). */
export const page = () => ({ first: 20 });
/** A root field taking the target's id as `id`. */
export const byId = (target: Target): GraphqlCase => ({ target, args: (id) => ({ id }) });
