import type { Sort, SortDirection } from '../db/pagination.ts';
import { builder } from './builder.ts';

export const OrderDirectionEnum = builder.enumType('OrderDirection', {
  description: 'Ascending (smallest, earliest, A first) or descending.',
  values: {
    asc: { description: 'Smallest, earliest or alphabetically first first.' },
    desc: { description: 'Largest, latest or alphabetically last first.' },
  },
});

type OrderFields<T> = Record<string, { field: 'id' | (keyof T & string); description: string }>;

/**
 * The `orderBy` argument of a connection: `<Name>Order { field, direction }` over an enum of the
 * fields it sorts by (ties are broken by creation order, so every order is total and pages are stable).
 */
export function orderInput<T>(name: string, what: string, fields: OrderFields<T>) {
  const fieldEnum = builder.enumType(`${name}OrderField`, {
    description: `What a list of ${what} is sorted by.`,
    values: Object.fromEntries(
      Object.entries(fields).map(([value, { description }]) => [value, { description }]),
    ) as Record<string, { description: string }>,
  });
  const ref = builder.inputType(`${name}Order`, {
    description: `The order of a list of ${what}; ties are broken by creation order.`,
    fields: (t) => ({
      field: t.field({ type: fieldEnum, required: true, description: 'The field sorted by.' }),
      direction: t.field({
        type: OrderDirectionEnum,
        required: true,
        defaultValue: 'asc',
        description: 'Ascending unless given.',
      }),
    }),
  });
  const toSort = (order: { field: string; direction: SortDirection } | null | undefined): Sort<T> => {
    if (!order) return { field: 'id', direction: 'asc' };
    const known = fields[order.field];
    if (!known) throw new Error(`${name}Order has no field ${order.field}`);
    return { field: known.field, direction: order.direction };
  };
  return { ref, toSort };
}
