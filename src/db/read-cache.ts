import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Reads of per-environment settings (seller profile, ledger settings and accounts, metering settings,
 * the environment row, tax codes) that a billing run's batch makes once instead of once per invoice.
 *
 * Outside `withReadCache` every `cachedRead` reads as before. Inside, the first read of a key is kept
 * for the rest of the scope, which a billing run opens around one batch: one transaction (a batch that
 * fails is rolled back whole and billed again in a new scope), so what is kept is what that
 * transaction read or wrote first, and it goes with the transaction.
 */
const storage = new AsyncLocalStorage<Map<string, Promise<unknown>>>();

/** Runs `work` with a fresh cache of settings reads. */
export function withReadCache<T>(work: () => Promise<T>): Promise<T> {
  return storage.run(new Map(), work);
}

/** `load()`, or inside `withReadCache` the answer of the first `load()` of `key`. */
export function cachedRead<T>(key: string, load: () => Promise<T>): Promise<T> {
  const cache = storage.getStore();
  if (!cache) return load();
  const kept = cache.get(key);
  if (kept) return kept as Promise<T>;
  const loading = load();
  cache.set(key, loading);
  // A failed read is not kept: the next one tries again.
  loading.catch(() => cache.delete(key));
  return loading;
}

/** Inside `withReadCache`, keeps `value` as the answer of `key` (read with others, in one query). */
export function keepRead<T>(key: string, value: T): void {
  storage.getStore()?.set(key, Promise.resolve(value));
}

/** The key of a customer's row in the cache: the reads of booking and of the tax policy share it. */
export const customerReadKey = (environmentId: string, customerId: string) =>
  `customer:${environmentId}:${customerId}`;
