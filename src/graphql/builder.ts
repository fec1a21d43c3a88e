import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import RelayPlugin from '@pothos/plugin-relay';
import ValidationPlugin from '@pothos/plugin-validation';
import { GraphQLScalarType } from 'graphql';
import {
  DateResolver,
  DateTimeResolver,
  JSONObjectResolver,
  SafeIntResolver,
  UUIDResolver,
} from 'graphql-scalars';
import type { RequestContext } from '../context.ts';
import { DomainError } from '../errors.ts';
import { EDGES_COST, fieldCost, PAGE_INFO_COST } from '../limits/query-cost.ts';
import { fieldIssues } from '../validation.ts';

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
};

/** The schema types every `ObjectRef` of this schema is parameterised with. */
export type SchemaTypes = PothosSchemaTypes.ExtendDefaultTypes<BuilderTypes>;

/** The schema builder: plugins and scalars only; every type lives in its domain module. */
export const builder = new SchemaBuilder<BuilderTypes>({
  plugins: [RelayPlugin, ValidationPlugin, ComplexityPlugin],
  defaultFieldNullability: false,
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    edgesFieldOptions: { complexity: EDGES_COST },
    pageInfoFieldOptions: { complexity: PAGE_INFO_COST },
  },
  // Fields carry their cost; limits/ prices each operation before it executes, not its resolvers.
  complexity: { fieldComplexity: fieldCost, disabled: true },
  validation: {
    // Input that breaks a rule surfaces as one INVALID_INPUT error naming each field (see graphql/errors.ts).
    validationError: (result) => DomainError.invalidInput(fieldIssues(result.issues as never)),
  },
});

// UUIDs are case-insensitive (RFC 9562); ids are stored, cached and compared in lowercase.
builder.addScalarType(
  'UUID',
  new GraphQLScalarType({
    ...UUIDResolver.toConfig(),
    parseValue: (value) => String(UUIDResolver.parseValue(value)).toLowerCase(),
    parseLiteral: (ast, variables) => String(UUIDResolver.parseLiteral(ast, variables)).toLowerCase(),
  }),
);
builder.addScalarType('Date', DateResolver);
builder.addScalarType('DateTime', DateTimeResolver);
builder.addScalarType('JSONObject', JSONObjectResolver);
builder.addScalarType('SafeInt', SafeIntResolver);

builder.queryType({});
builder.mutationType({});
