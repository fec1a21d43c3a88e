import { z } from 'zod';
import type { RequestContext } from '../context.ts';
import { type Connection, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type PageArgs } from '../db/pagination.ts';
import { parseInput } from '../validation.ts';
import type { Route } from './router.ts';

/** Query of every list endpoint: the page size and the cursor the previous page ended with. */
export const ListQuery = z.strictObject({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .optional()
    .meta({ description: `Items per page, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})` }),
  after: z.string().optional().meta({ description: 'The nextCursor of the previous page' }),
});

/** A page of a list: the items in creation order and the cursor of the next page (null on the last). */
const listResponse = (item: z.ZodType) =>
  z.strictObject({
    data: z.array(item),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `after` for the next page; null: last page' }),
  });

/**
 * `GET <path>`: the environment's rows of a resource a page at a time (keyset pagination in creation
 * order, the same cursors GraphQL's connections use). Beyond the contract, which lists no collections.
 */
export function listRoute<T>(options: {
  path: string;
  what: string;
  item: z.ZodType;
  list: (ctx: RequestContext, page: PageArgs) => Promise<Connection<T>>;
  respond: (ctx: RequestContext, rows: T[]) => unknown[] | Promise<unknown[]>;
}): Route {
  return {
    method: 'GET',
    path: options.path,
    summary: `List ${options.what} (beyond the contract), oldest first`,
    query: ListQuery,
    response: { status: 200, description: `A page of ${options.what}`, schema: listResponse(options.item) },
    handler: async ({ ctx, request }) => {
      const query = parseInput(ListQuery, Object.fromEntries(new URL(request.url).searchParams));
      const page = await options.list(ctx, { first: query.limit ?? null, after: query.after ?? null });
      const rows = page.edges.map((edge) => edge.node);
      return {
        status: 200,
        body: {
          data: await options.respond(ctx, rows),
          nextCursor: page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null,
        },
      };
    },
  };
}
