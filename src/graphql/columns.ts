import {
  type FieldNode,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  getNamedType,
  isObjectType,
} from 'graphql';
import { selectedFields } from './selection.ts';

/**
 * What a field's resolver reads of its parent's row, for reads that fetch only the columns a selection
 * needs (as PostGraphile does). A field exposed with `t.expose…` reads its property and says so itself
 * (Pothos records it); a field with a resolver of its own declares it with `extensions`:
 *
 *   - `reads('voidedAt', 'totalInclVat')`: the resolver reads these properties and no others;
 *   - `SAME_ROW`: the field resolves to its parent's row itself (`tax: item => item`): its own
 *     selection says what is read of it.
 *
 * A field that declares nothing may read anything: a selection with it reads every column.
 */
export const reads = (...properties: string[]) => ({ readsProperties: properties });

export const SAME_ROW = { readsSameRow: true };

type ColumnExtensions = {
  pothosExposedField?: unknown;
  readsProperties?: unknown;
  readsSameRow?: unknown;
};

/**
 * The properties of the rows of `type` the fields selected at `path` (below the field being resolved,
 * see selectedFields) read; null when one of them may read anything (it declares nothing), or the
 * selection names a field `type` does not have: then every column is to be read. `__typename` reads
 * nothing. Reading more than needed is the only way it can be wrong.
 */
export function propertiesRead(
  info: GraphQLResolveInfo,
  path: readonly string[],
  type: GraphQLObjectType,
): Set<string> | null {
  const properties = new Set<string>();
  const fields = type.getFields();
  for (const name of selectedFields(info, path)) {
    if (name === '__typename') continue;
    const extensions = fields[name]?.extensions as ColumnExtensions | undefined;
    if (!extensions) return null;
    if (typeof extensions.pothosExposedField === 'string') {
      properties.add(extensions.pothosExposedField);
    } else if (Array.isArray(extensions.readsProperties)) {
      for (const property of extensions.readsProperties) properties.add(String(property));
    } else if (extensions.readsSameRow === true) {
      const inner = getNamedType(fields[name]?.type);
      if (!isObjectType(inner)) return null;
      const nested = propertiesRead(info, [...path, name], inner);
      if (!nested) return null;
      for (const property of nested) properties.add(property);
    } else {
      return null;
    }
  }
  return properties;
}

/** The object type `name` of the schema being executed (a type the caller's module defines). */
export function objectType(info: GraphQLResolveInfo, name: string): GraphQLObjectType {
  const type = info.schema.getType(name);
  if (!isObjectType(type)) throw new Error(`${name} is not an object type of the schema`);
  return type;
}

/**
 * `compute(info)` remembered per the field nodes being resolved, for a function of the selection alone
 * (propertiesRead, selectedFields: they count a field under @skip or @include as selected, so the
 * variables do not change them). Yoga's parse cache hands every request of the same text the same
 * parsed document, so its field nodes, and the fragments they spread, are the same objects each time;
 * a document parsed anew has new nodes and is worked out anew.
 */
export function perSelection<T>(compute: (info: GraphQLResolveInfo) => T): (info: GraphQLResolveInfo) => T {
  // One level per field node: the nodes merged into one field (the same response key) are its key.
  type Level = { known?: { value: T }; next?: WeakMap<FieldNode, Level> };
  const root: Level = {};
  return (info) => {
    let level = root;
    for (const node of info.fieldNodes) {
      level.next ??= new WeakMap();
      let inner = level.next.get(node);
      if (!inner) {
        inner = {};
        level.next.set(node, inner);
      }
      level = inner;
    }
    level.known ??= { value: compute(info) };
    return level.known.value;
  };
}
