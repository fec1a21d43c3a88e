import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import ValidationPlugin from '@pothos/plugin-validation';
import { GraphQLScalarType, visit } from 'graphql';
import {
  DateResolver,
  DateTimeResolver,
  JSONObjectResolver,
  SafeIntResolver,
  UUIDResolver,
} from 'graphql-scalars';
import { grantsScope, missingScope } from '../auth/scopes.ts';
import type { RequestContext } from '../context.ts';
import { DomainError } from '../errors.ts';
import { EDGES_COST, fieldCost, PAGE_INFO_COST } from '../limits/query-cost.ts';
import { fieldIssues } from '../validation.ts';
import { NullableMutations } from './nullable-mutations.plugin.ts';

export type BuilderTypes = {
  Context: RequestContext;
  Scalars: {
    UUID: { Input: string; Output: string };
    Date: { Input: Date; Output: Date | string };
    DateTime: { Input: Date; Output: Date };
    JSONObject: { Input: Record<string, unknown>; Output: Record<string, unknown> };
    /** Money in minor units: an integer beyond GraphQL Int's 32 bits, within JavaScript's exact range. */
    SafeInt: { Input: number; Output: number };
  };
  DefaultFieldNullability: false;
  DefaultInputFieldRequiredness: false;
  AuthScopes: { write: boolean };
  /** What every connection resolver returns besides edges and pageInfo (see db/pagination.ts). */
  Connection: { totalCount: () => Promise<number> };
};

/** The schema types every `ObjectRef` of this schema is parameterised with. */
export type SchemaTypes = PothosSchemaTypes.ExtendDefaultTypes<BuilderTypes>;

/** The schema builder: plugins and scalars only; every type lives in its domain module. */
export const builder = new SchemaBuilder<BuilderTypes>({
  plugins: [ScopeAuthPlugin, RelayPlugin, ValidationPlugin, ComplexityPlugin, NullableMutations],
  defaultFieldNullability: false,
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    edgesFieldOptions: { complexity: EDGES_COST },
    pageInfoFieldOptions: { complexity: PAGE_INFO_COST },
  },
  scopeAuth: {
    authScopes: (ctx) => ({ write: grantsScope(ctx.token, 'write') }),
    unauthorizedError: (_parent, ctx, info) =>
      missingScope(ctx.token, 'write', `${info.parentType.name}.${info.fieldName}`),
  },
  // Fields carry their cost; limits/ prices each operation before it executes, not its resolvers.
  complexity: { fieldComplexity: fieldCost, disabled: true },
  validation: {
    // Input that breaks a rule surfaces as one INVALID_INPUT error naming each field (see graphql/errors.ts).
    validationError: (result) => DomainError.invalidInput(fieldIssues(result.issues as never)),
  },
});

// UUIDs are case-insensitive (RFC 9562); ids are stored, cached and compared in lowercase.
// parseLiteral takes the literal alone: a UUID literal is a string and holds no variables. graphql-jit
// calls it without variables, and says so on stderr for any parseLiteral declaring a second parameter.
builder.addScalarType(
  'UUID',
  new GraphQLScalarType({
    ...UUIDResolver.toConfig(),
    parseValue: (value) => String(UUIDResolver.parseValue(value)).toLowerCase(),
    parseLiteral: (ast) => String(UUIDResolver.parseLiteral(ast, undefined)).toLowerCase(),
  }),
);
builder.addScalarType('Date', DateResolver);
builder.addScalarType('DateTime', DateTimeResolver);
// A JSONObject literal may not hold variables (`{ a: $x }`): graphql-jit parses literals without the
// variables, so such a literal would read differently compiled and not. Pass the whole object as one
// variable instead.
builder.addScalarType(
  'JSONObject',
  new GraphQLScalarType({
    ...JSONObjectResolver.toConfig(),
    parseLiteral: (ast) => {
      visit(ast, {
        Variable: (node) => {
          throw new TypeError(
            `A JSONObject literal cannot hold the variable $${node.name.value}; pass the whole object as a variable.`,
          );
        },
      });
      return JSONObjectResolver.parseLiteral(ast, undefined);
    },
  }),
);
builder.addScalarType('SafeInt', SafeIntResolver);

builder.queryType({});

builder.globalConnectionField('totalCount', (t) =>
  t.int({
    description: "Items matching the connection's filter, all pages together.",
    resolve: (connection) => connection.totalCount(),
  }),
);
builder.mutationType({
  description:
    'Each root field runs and commits in a transaction of its own, in document order: a field that ' +
    'fails answers null with its error and leaves the others as they are. Needs a token with the write scope.',
  // Every mutation writes: a token with the read scope may only query.
  authScopes: { write: true },
});
builder.subscriptionType({
  description:
    'Live streams over Server-Sent Events (`Accept: text/event-stream`), scoped to the environment of the ' +
    'request. A stream shows what commits from the moment it opens; what it missed is in the matching query.',
});
