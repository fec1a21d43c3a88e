import { createComplexityRule } from '@pothos/plugin-complexity';
import {
  type DocumentNode,
  GraphQLError,
  type GraphQLField,
  type GraphQLSchema,
  getNamedType,
  getNullableType,
  isLeafType,
  isListType,
  TypeInfo,
  type ValueNode,
  type VariableDefinitionNode,
  validate,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../db/pagination.ts';
import { variablesFit } from '../graphql/operation.ts';

/**
 * The most elements each unpaged list of objects is weighted with. Where the domain caps the list
 * the cap is the weight; where it does not, the weight is an assumed worst case, and the execution
 * deadline and the response-size bound stop the rare tenant whose data exceed it.
 */
export const LIST_BOUNDS = {
  /** Invoice lines are capped at 1,000 per invoice. */
  invoiceItems: 1000,
  /** Not capped: payments and credit notes, a handful per invoice in practice. */
  settlements: 100,
  /** Not capped: items accumulate over a subscription's changes. */
  subscriptionItems: 100,
  /** Not capped: one invoice and at most one error per customer billed by the run. */
  billingRunInvoices: 1000,
  billingRunErrors: 1000,
  /** Not capped: one per currency a customer was billed or credited in, a handful in practice. */
  customerBalances: 100,
} as const;

/** The cost of a list field holding at most `bound` elements. */
export const listCost = (bound: number) => ({ field: 1, multiplier: bound });

/**
 * Relay's edges list: its connection field multiplies by the page size already, and pageInfo is
 * worked out from the page in memory.
 */
export const EDGES_COST = { field: 0, multiplier: 1 };
export const PAGE_INFO_COST = { field: 0, multiplier: 0 };

/**
 * The default for fields without a cost of their own: a connection costs one unit per edge its
 * `first` (or `last`) asks for (literal or variable; the default page size when absent; an out-of-range `first`
 * is refused by the resolver, so it is weighted as the largest page). A list of objects nobody priced
 * is weighted as a full page; every other field costs 1.
 */
export function fieldCost<Context>(
  args: Record<string, unknown>,
  _ctx: Context,
  field: GraphQLField<unknown, Context>,
) {
  if (field.args.some((arg) => arg.name === 'first')) {
    const size = [args.first, args.last].find((value) => typeof value === 'number') ?? DEFAULT_PAGE_SIZE;
    return listCost(Math.min(Math.max(size as number, 0), MAX_PAGE_SIZE));
  }
  const type = getNullableType(field.type);
  return isListType(type) && !isLeafType(getNamedType(type)) ? listCost(MAX_PAGE_SIZE) : 1;
}

export type QueryCostRequest = {
  schema: GraphQLSchema;
  document: DocumentNode;
  variableValues: Record<string, unknown>;
  operationName?: string | null;
  context: object;
};

export type QueryPrice = { cost: number; errors: readonly GraphQLError[] };

/**
 * The operation's cost with the variables it came with (a `first: $n` is priced at its value), and the
 * errors refusing it when it costs more than `maxCost`: empty when it may run.
 *
 * Remembered per document (the parsed document, which Yoga's parse cache hands every request of the same
 * text) and per the values of the variables its price depends on: those given to a `first` or `last`
 * (the only arguments fieldCost reads) and any argument an argument mapper reads (input validation, which
 * may refuse while pricing). Any other variable is only told apart by being absent, null or given, and
 * the variables are checked against their types first (as pricing does): variables that do not fit are
 * priced, and refused, every time. A document with a field priced by another function than fieldCost is
 * priced every time.
 */
export function priceQuery(request: QueryCostRequest, maxCost: number): QueryPrice {
  const keying = keyingOf(request.schema, request.document);
  const definitions = keying?.operations.get(request.operationName ?? '');
  if (!keying || !definitions) return priceNow(request, maxCost);
  if (!variablesFit(request.schema, definitions, request.variableValues)) return priceNow(request, maxCost);
  const key = priceKey(keying, request, maxCost);
  const known = keying.prices.get(key);
  if (known) {
    keying.prices.delete(key);
    keying.prices.set(key, known);
    return known;
  }
  const price = priceNow(request, maxCost);
  keying.prices.set(key, price);
  if (keying.prices.size > PRICES_PER_DOCUMENT)
    keying.prices.delete(keying.prices.keys().next().value as string);
  return price;
}

/** Prices remembered per document, the least recently used dropped beyond it. */
const PRICES_PER_DOCUMENT = 64;

/** What a document's price depends on, and the prices found for it. */
type Keying = {
  priced: readonly string[];
  other: readonly string[];
  /** Each operation's variable definitions by its name ('' for the document's only operation). */
  operations: Map<string, readonly VariableDefinitionNode[]>;
  prices: Map<string, QueryPrice>;
};

const keyings = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Keying | null>>();

function keyingOf(schema: GraphQLSchema, document: DocumentNode): Keying | null {
  let bySchema = keyings.get(schema);
  if (!bySchema) {
    bySchema = new WeakMap();
    keyings.set(schema, bySchema);
  }
  let keying = bySchema.get(document);
  if (keying === undefined) {
    keying = analyse(schema, document);
    bySchema.set(document, keying);
  }
  return keying;
}

/** The variables of `document` its price reads, and the others; null when it cannot be remembered. */
function analyse(schema: GraphQLSchema, document: DocumentNode): Keying | null {
  const priced = new Set<string>();
  const other = new Set<string>();
  let cacheable = true;
  const variablesIn = (value: ValueNode, into: Set<string>) => {
    visit(value, { Variable: (node) => void into.add(node.name.value) });
  };
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      VariableDefinition: (node) => void other.add(node.variable.name.value),
      Field: (node) => {
        const field = typeInfo.getFieldDef();
        if (!field) {
          if (!node.name.value.startsWith('__')) cacheable = false;
          return;
        }
        const extensions = field.extensions as { complexity?: unknown; pothosArgMappers?: unknown[] };
        const complexity = extensions.complexity;
        if (typeof complexity === 'function' && complexity !== fieldCost) cacheable = false;
        const mapped = (extensions.pothosArgMappers?.length ?? 0) > 0;
        for (const argument of node.arguments ?? []) {
          const read = mapped || argument.name.value === 'first' || argument.name.value === 'last';
          variablesIn(argument.value, read ? priced : other);
        }
      },
    }),
  );
  if (!cacheable) return null;
  for (const name of priced) other.delete(name);
  const operations = new Map<string, readonly VariableDefinitionNode[]>();
  const definitions = document.definitions.filter((definition) => definition.kind === 'OperationDefinition');
  for (const operation of definitions) {
    if (operation.name) operations.set(operation.name.value, operation.variableDefinitions ?? []);
  }
  const [only] = definitions;
  if (only && definitions.length === 1) operations.set('', only.variableDefinitions ?? []);
  return { priced: [...priced].sort(), other: [...other].sort(), operations, prices: new Map() };
}

function priceKey(keying: Keying, request: QueryCostRequest, maxCost: number): string {
  const values = request.variableValues;
  const has = (name: string) => Object.hasOwn(values, name);
  const priced = keying.priced.map((name) => (has(name) ? [values[name]] : []));
  const other = keying.other.map((name) => (!has(name) ? 'u' : values[name] === null ? 'n' : 'v')).join('');
  return `${request.operationName ?? ''}\u0000${maxCost}\u0000${other}\u0000${JSON.stringify(priced)}`;
}

function priceNow(request: QueryCostRequest, maxCost: number): QueryPrice {
  let cost = 0;
  const rule = createComplexityRule({
    context: request.context,
    variableValues: request.variableValues,
    operationName: request.operationName,
    validate: ({ complexity }, reportError) => {
      cost = complexity;
      if (complexity <= maxCost) return;
      reportError(
        new GraphQLError(
          `The query costs ${complexity}; the limit is ${maxCost}. Ask for smaller pages or fewer fields.`,
          {
            extensions: { code: 'QUERY_TOO_COMPLEX', cost: complexity, maxCost, http: { status: 400 } },
          },
        ),
      );
    },
  });
  const errors = validate(request.schema, request.document, [rule]);
  return { cost, errors };
}
