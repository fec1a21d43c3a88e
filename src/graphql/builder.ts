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
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../db/pagination.ts';
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
    edgesFieldOptions: {
      complexity: EDGES_COST,
      description: 'The items of this page, each with its cursor, in the order asked for.',
    },
    pageInfoFieldOptions: {
      complexity: PAGE_INFO_COST,
      description: 'Where this page sits in the whole list: whether more pages follow or precede.',
    },
    nodeFieldOptions: { description: 'The item itself.' },
    cursorFieldOptions: {
      description: 'An opaque cursor of this item: pass it as `after` or `before` to page from here.',
    },
    pageInfoTypeOptions: {
      description: 'Where a page sits in its list, and the cursors to fetch the next or previous one.',
    },
    hasNextPageFieldOptions: {
      description: 'Whether items follow this page (fetch them with `after: endCursor`).',
    },
    hasPreviousPageFieldOptions: {
      description: 'Whether items precede this page (fetch them with `before: startCursor`).',
    },
    startCursorFieldOptions: {
      description: "The first item's cursor; null when the page is empty.",
    },
    endCursorFieldOptions: {
      description: "The last item's cursor; null when the page is empty.",
    },
    firstArgOptions: {
      description: `Page forwards: at most this many items (1 to ${MAX_PAGE_SIZE}) after \`after\`, or from the start. Without \`first\` and \`last\`: ${DEFAULT_PAGE_SIZE}.`,
    },
    afterArgOptions: {
      description: 'A cursor from a previous page: answer the items after it.',
    },
    lastArgOptions: {
      description: `Page backwards: at most this many items (1 to ${MAX_PAGE_SIZE}) before \`before\`, or up to the end. Not with \`first\`.`,
    },
    beforeArgOptions: {
      description: 'A cursor from a previous page: answer the items before it.',
    },
    defaultConnectionTypeOptions: {
      description:
        'One page of a list: its items with their cursors, where the page sits, and the count of all.',
    },
    defaultEdgeTypeOptions: {
      description: 'One item of a page and the cursor that points at it.',
    },
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
// Serialising answers the id as it is when it is plainly a UUID (every id read from the database), with
// one compiled pattern; anything else goes through graphql-scalars' own check, which builds its pattern
// on each call (a page of 50 invoices serialises some 250 ids).
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
builder.addScalarType(
  'UUID',
  new GraphQLScalarType({
    ...UUIDResolver.toConfig(),
    serialize: (value) =>
      typeof value === 'string' && UUID_TEXT.test(value) ? value : UUIDResolver.serialize(value),
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

builder.queryType({ description: 'Reads of the environment the request acts in (`x-environment`).' });

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
