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
 * names must not grow its entry without bound (beyond it, the operation is looked up each time).
 */
const NAMES_PER_DOCUMENT = 16;

const operations = new WeakMap<DocumentNode, Map<string | null, OperationDefinitionNode | null>>();

/**
 * `getOperationAST(document, operationName)`, found once per parsed document and operation name and
 * shared by every plugin that asks (the query cost, the compiled executor, audit, idempotency, the
 * transaction, the metrics label): Yoga's parse cache hands every request of the same text the same
 * DocumentNode, and a document is never changed once parsed (a narrowed document is a new object).
 */
export function operationOf(
  document: DocumentNode,
  operationName?: string | null,
): OperationDefinitionNode | null {
  let byName = operations.get(document);
  if (!byName) {
    byName = new Map();
    operations.set(document, byName);
  }
  // getOperationAST treats null and undefined alike (no name given), and '' as a name.
  const key = operationName ?? null;
  const known = byName.get(key);
  if (known !== undefined) return known;
  const operation = getOperationAST(document, operationName) ?? null;
  if (byName.size < NAMES_PER_DOCUMENT) byName.set(key, operation);
  return operation;
}

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
