import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import type { LoaderSet } from '../../context.ts';

/**
 * "Now" for one customer: the frozen time of its test clock, or this server's clock for a customer on
 * none. Everything that defaults a moment for a customer (changes and cancellations of its
 * subscriptions, its invoice previews, its overdue checks) asks here, so a customer on a clock lives on
 * the clock's time. An unknown customer gets the real time (the caller reports it as not found).
 */
export async function customerNow(
  em: EntityManager,
  environmentId: string,
  customerId: string,
): Promise<Date> {
  const rows = await em.execute<{ frozen_time: Date | string }[]>(
    `select t.frozen_time from customer c
     join test_clock t on t.environment_id = c.environment_id and t.id = c.test_clock_id
     where c.environment_id = ? and c.id = ?`,
    [environmentId, customerId],
  );
  const frozen = rows[0]?.frozen_time;
  return frozen == null ? new Date() : new Date(frozen);
}

/**
 * The customers of a test clock (`clockId`), or those on no clock (`null`): a condition on a customer
 * row's `test_clock_id` column, and its parameters. Written out for each case rather than as `is not
 * distinct from`, which PostgreSQL cannot estimate (it guessed one customer, and scanned them all).
 */
export function onClock(column: string, clockId: string | null): { sql: string; params: string[] } {
  return clockId === null
    ? { sql: `${column} is null`, params: [] }
    : { sql: `${column} = ?`, params: [clockId] };
}

/** "Now" for many customers of a request at once (customerNow, batched): for fields such as `overdue`. */
export const clockLoaders = ((em, environmentId) => ({
  nowByCustomerId: new DataLoader<string, Date>(async (customerIds) => {
    const rows = await em.execute<{ id: string; frozen_time: Date | string }[]>(
      `select c.id, t.frozen_time from customer c
       join test_clock t on t.environment_id = c.environment_id and t.id = c.test_clock_id
       where c.environment_id = ? and c.id in (?)`,
      [environmentId, customerIds],
    );
    const frozen = new Map(rows.map((row) => [row.id, new Date(row.frozen_time)]));
    const now = new Date();
    return customerIds.map((id) => frozen.get(id) ?? now);
  }),
})) satisfies LoaderSet<unknown>;
