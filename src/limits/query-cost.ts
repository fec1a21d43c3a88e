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
  validate,
} from 'graphql';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../db/pagination.ts';

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

/**
 * The operation's cost with the variables it came with (a `first: $n` is priced at its value), and the
 * errors refusing it when it costs more than `maxCost`: empty when it may run.
 */
export function priceQuery(
  request: QueryCostRequest,
  maxCost: number,
): { cost: number; errors: readonly GraphQLError[] } {
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
