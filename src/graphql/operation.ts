import {
  type DocumentNode,
  type GraphQLSchema,
  getOperationAST,
  getVariableValues,
  type OperationDefinitionNode,
  type VariableDefinitionNode,
} from 'graphql';

/**
 * Operation names remembered per document: the name is the client's, so a document sent with ever new
 * names must not grow its entry without bound (beyond it, the answer is worked out each time).
 */
const NAMES_PER_DOCUMENT = 16;

/**
 * `compute(document, operationName)` remembered per parsed document and operation name: Yoga's parse
 * cache hands every request of the same text the same DocumentNode, and a document is never changed once
 * parsed (a narrowed document is a new object).
 */
export function perDocument<T>(
  compute: (document: DocumentNode, operationName?: string | null) => T,
): (document: DocumentNode, operationName?: string | null) => T {
  const known = new WeakMap<DocumentNode, Map<string | null, T>>();
  return (document, operationName) => {
    let byName = known.get(document);
    if (!byName) {
      byName = new Map();
      known.set(document, byName);
    }
    // getOperationAST treats null and undefined alike (no name given), and '' as a name.
    const key = operationName ?? null;
    if (byName.has(key)) return byName.get(key) as T;
    const value = compute(document, operationName);
    if (byName.size < NAMES_PER_DOCUMENT) byName.set(key, value);
    return value;
  };
}

/**
 * `getOperationAST(document, operationName)`, found once per parsed document and operation name and
 * shared by every plugin that asks (the query cost, the compiled executor, audit, idempotency, the
 * transaction, the metrics label).
 */
export const operationOf = perDocument(
  (document, operationName): OperationDefinitionNode | null =>
    getOperationAST(document, operationName) ?? null,
);

const fits = new WeakMap<object, WeakMap<readonly VariableDefinitionNode[], boolean>>();

/**
 * Whether `variableValues` coerce to the types `definitions` declare (`getVariableValues` without
 * errors), found once per request: the query cost check and the choice of executor both ask, with the
 * same variables object. Coercion is a pure function of the schema, the definitions and the values,
 * and a request's variables object is not changed while it runs.
 */
export function variablesFit(
  schema: GraphQLSchema,
  definitions: readonly VariableDefinitionNode[],
  variableValues: Record<string, unknown>,
): boolean {
  if (definitions.length === 0) return true;
  let byDefinitions = fits.get(variableValues);
  if (!byDefinitions) {
    byDefinitions = new WeakMap();
    fits.set(variableValues, byDefinitions);
  }
  const known = byDefinitions.get(definitions);
  if (known !== undefined) return known;
  const fit = !getVariableValues(schema, definitions, variableValues).errors;
  byDefinitions.set(definitions, fit);
  return fit;
}
