import type { FieldNode, GraphQLResolveInfo, SelectionSetNode } from 'graphql';

/**
 * The names of the fields selected at `path` below the field being resolved (e.g. ['edges', 'node']
 * of a connection): through fragments and inline fragments, whatever their type condition, and
 * counting a field under @skip or @include as selected. For a resolver to read up front what its
 * children will ask for; reading a little more than needed is the only way it can be wrong.
 */
export function selectedFields(info: GraphQLResolveInfo, path: readonly string[]): Set<string> {
  const names = new Set<string>();
  const visit = (selectionSet: SelectionSetNode | undefined, depth: number, seen: Set<string>) => {
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.kind === 'InlineFragment') {
        visit(selection.selectionSet, depth, seen);
      } else if (selection.kind === 'FragmentSpread') {
        const name = selection.name.value;
        const fragment = info.fragments[name];
        if (fragment && !seen.has(name)) visit(fragment.selectionSet, depth, new Set([...seen, name]));
      } else if (depth === path.length) {
        names.add(selection.name.value);
      } else if (selection.name.value === path[depth]) {
        visit(selection.selectionSet, depth + 1, seen);
      }
    }
  };
  for (const node of info.fieldNodes as readonly FieldNode[]) visit(node.selectionSet, 0, new Set());
  return names;
}
