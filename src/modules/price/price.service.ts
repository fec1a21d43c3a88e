import type { FilterQuery } from '@mikro-orm/core';
import type { RequestContext } from '../../context.ts';
import { applyChanges } from '../../db/changes.ts';
import { loadOrNotFound, managedOrNotFound } from '../../db/loaders.ts';
import { type Connection, containing, keysetPage, type PageArgs, type Sort } from '../../db/pagination.ts';
import { DomainError, type FieldIssue } from '../../errors.ts';
import { type Price, PriceSchema } from './price.entity.ts';
import type { PriceCreateInput, PriceUpdateInput } from './price.input.ts';
import { priceLoaders } from './price.reads.ts';
import type { Pricing } from './pricing.ts';

/** Narrows a list of prices; every condition given must hold. */
export type PriceFilter = {
  /** Part of the name, in any case. */
  search?: string | null;
  /** Prices with an amount in this currency (ISO 4217, either case). */
  currency?: string | null;
  priceModel?: Price['priceModel'] | null;
  purchase?: Price['purchase'] | null;
};

/** Prices of one environment: the rules both faces go through. */
export class PriceService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  get(id: string): Promise<Readonly<Price>> {
    return loadOrNotFound(this.ctx.loaders.of(priceLoaders).byId, 'Price', id);
  }

  list(page: PageArgs, filter: PriceFilter = {}, sort?: Sort<Price>): Promise<Connection<Price>> {
    const where: FilterQuery<Price>[] = [{ environmentId: this.ctx.environmentId }];
    // `pricing` is keyed by lowercase currency code.
    if (filter.currency) where.push({ pricing: { $hasKey: filter.currency.toLowerCase() } } as never);
    if (filter.priceModel) where.push({ priceModel: filter.priceModel });
    if (filter.purchase) where.push({ purchase: filter.purchase });
    if (filter.search) where.push({ name: { $ilike: containing(filter.search) } });
    return keysetPage(this.ctx.em, PriceSchema, { $and: where }, page, sort);
  }

  async create(input: PriceCreateInput): Promise<Price> {
    const price = this.ctx.em.create(PriceSchema, {
      environmentId: this.ctx.environmentId,
      purchase: input.purchase,
      method: input.method,
      taxBehavior: input.taxBehavior ?? 'exclusive',
      ...replaceable(input),
    });
    await this.ctx.em.flush();
    return price;
  }

  /**
   * Replaces every updatable field. `purchase` and `method` are fixed at creation: sending the
   * stored value is accepted (and changes nothing), sending another one is refused.
   */
  async update(id: string, input: PriceUpdateInput): Promise<Price> {
    const { em, environmentId } = this.ctx;
    const price = await managedOrNotFound(em, PriceSchema, environmentId, id, 'Price');
    const fixed: FieldIssue[] = (['purchase', 'method'] as const)
      .filter((field) => input[field] !== undefined && input[field] !== price[field])
      .map((field) => ({
        path: [field],
        message: `is fixed at creation (${price[field]}) and cannot be changed; create a new price instead`,
      }));
    if (fixed.length > 0) throw DomainError.invalidInput(fixed);
    // taxBehavior is not a REST field: a PUT that cannot send it leaves it as it is.
    const changed = applyChanges(price, {
      ...replaceable(input),
      taxBehavior: input.taxBehavior ?? undefined,
    });
    if (!changed) return price;
    price.updatedAt = new Date();
    await this.ctx.em.flush();
    this.ctx.loaders.forget(priceLoaders);
    return price;
  }
}

/** The fields a PUT replaces; what it leaves out is cleared. */
const replaceable = (input: PriceUpdateInput) => ({
  name: input.name,
  termUnit: input.termUnit,
  termCount: input.termCount,
  priceModel: input.priceModel,
  description: input.description ?? null,
  // The input schema has checked every entry against `priceModel`.
  pricing: (input.pricing ?? {}) as Pricing,
});
