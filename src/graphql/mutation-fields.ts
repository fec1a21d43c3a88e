import {
  type ExecutionArgs,
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  getDirectiveValues,
  getVariableValues,
  Kind,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import { operationOf } from './operation.ts';

/** One root field of a mutation: its response key and the execution of it alone. */
export type RootField = { responseKey: string; nodes: readonly FieldNode[]; args: ExecutionArgs };

/**
 * Splits a mutation into its root fields, in the order GraphQL executes them (first appearance of
 * each response key, after fragments are spread and @skip/@include applied). Each comes with the
 * same execution narrowed to a document whose operation selects only that field (fragments kept for
 * its selections), so running them one after the other answers what the whole document would.
 * Undefined for anything but a mutation, and for variables that do not coerce: executing those
 * answers the errors without running a field.
 */
export function splitMutation(args: ExecutionArgs): RootField[] | undefined {
  const operation = operationOf(args.document, args.operationName);
  if (operation?.operation !== 'mutation') return undefined;
  const { coerced } = getVariableValues(
    args.schema,
    operation.variableDefinitions ?? [],
    args.variableValues ?? {},
  );
  if (!coerced) return undefined;
  const fragments = args.document.definitions.filter(
    (definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION,
  );
  const byKey = new Map<string, FieldNode[]>();
  const included = (node: SelectionNode) =>
    !getDirectiveValues(GraphQLSkipDirective, node, coerced)?.if &&
    getDirectiveValues(GraphQLIncludeDirective, node, coerced)?.if !== false;
  const collect = (selectionSet: SelectionSetNode) => {
    for (const selection of selectionSet.selections) {
      if (!included(selection)) continue;
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        byKey.set(key, [...(byKey.get(key) ?? []), selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        collect(selection.selectionSet);
      } else {
        const fragment = fragments.find((candidate) => candidate.name.value === selection.name.value);
        if (fragment) collect(fragment.selectionSet);
      }
    }
  };
  collect(operation.selectionSet);
  return [...byKey].map(([responseKey, nodes]) => ({
    responseKey,
    nodes,
    args: {
      ...args,
      operationName: operation.name?.value,
      document: {
        ...args.document,
        definitions: [
          { ...operation, selectionSet: { kind: Kind.SELECTION_SET, selections: nodes } },
          ...fragments,
        ],
      },
    },
  }));
}

/** The response key of the (first) root field an execution selects: a RootField's, for its args. */
export function responseKeyOf(args: ExecutionArgs): string {
  const [first] = operationOf(args.document, args.operationName)?.selectionSet.selections ?? [];
  return first?.kind === Kind.FIELD ? (first.alias?.value ?? first.name.value) : '';
}
