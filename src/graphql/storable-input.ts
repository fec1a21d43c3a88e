import { type ASTNode, type DocumentNode, type GraphQLError, Kind, visit } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { DomainError, type FieldPath } from '../errors.ts';
import { assertStorableInput } from '../validation.ts';
import { maskError } from './errors.ts';

/** Where a string literal sits: its argument and the input object fields around it. */
function literalPath(ancestors: readonly (ASTNode | readonly ASTNode[])[]): FieldPath {
  return ancestors.flatMap((ancestor) =>
    'kind' in ancestor && (ancestor.kind === Kind.ARGUMENT || ancestor.kind === Kind.OBJECT_FIELD)
      ? [ancestor.name.value]
      : [],
  );
}

/** Each document's refusal of its string literals (null: they are storable), found once per document. */
const literalChecks = new WeakMap<DocumentNode, GraphQLError | null>();

function literalRefusal(document: DocumentNode): GraphQLError | null {
  const known = literalChecks.get(document);
  if (known !== undefined) return known;
  let refusal: GraphQLError | null = null;
  try {
    visit(document, {
      StringValue(node, _key, parent, _path, ancestors) {
        assertStorableInput(node.value, literalPath(parent ? [...ancestors, parent] : ancestors));
      },
    });
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    refusal = maskError(error, error.message) as GraphQLError;
  }
  literalChecks.set(document, refusal);
  return refusal;
}

/**
 * The check REST bodies get (assertStorableInput), for GraphQL: the request's variables and the
 * document's string literals, before anything executes, so that too-deep input or text PostgreSQL
 * cannot store is an INVALID_INPUT error rather than an unexpected failure. Must come before the
 * plugins that read the variables (the Idempotency-Key fingerprint). The literals are checked once
 * per parsed document (Yoga's parse cache hands every request of the same text the same one).
 */
export function useStorableInput(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      try {
        assertStorableInput(args.variableValues ?? {});
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        return setResultAndStopExecution({ errors: [maskError(error, error.message) as GraphQLError] });
      }
      const refusal = literalRefusal(args.document);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
  };
}
