import type { FilterQuery } from '@mikro-orm/core';
import type { RequestContext } from '../../context.ts';
import { applyChanges } from '../../db/changes.ts';
import { flushOrFail } from '../../db/flush.ts';
import { loadOrNotFound, managedOrNotFound } from '../../db/loaders.ts';
import { type Connection, containing, keysetPage, type PageArgs, type Sort } from '../../db/pagination.ts';
import { DomainError } from '../../errors.ts';
import { TaxCodeService } from '../tax/tax-code.service.ts';
import { type Product, ProductSchema } from './product.entity.ts';
import {
  METADATA_LIMITS,
  type MetadataChange,
  type ProductCreateInput,
  type ProductUpdateInput,
} from './product.input.ts';
import { productLoaders } from './product.reads.ts';

/** Narrows a list of products; every condition given must hold. */
export type ProductFilter = {
  /** Part of the name or handle, in any case. */
  search?: string | null;
  /** Products taxed under this tax code. */
  taxCode?: string | null;
};

const unknownTaxCode = () =>
  DomainError.onField('INVALID_REFERENCE', ['taxCode'], 'is not the code of a tax code of this environment');

/** Products of one environment: the rules both the GraphQL and the REST face go through. */
export class ProductService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  get(id: string): Promise<Readonly<Product>> {
    return loadOrNotFound(this.ctx.loaders.of(productLoaders).byId, 'Product', id);
  }

  /** The product whose handle (SKU) this is, or null when the environment has none. */
  findByHandle(handle: string): Promise<Product | null> {
    return this.ctx.em.findOne(ProductSchema, { environmentId: this.ctx.environmentId, handle });
  }

  list(page: PageArgs, filter: ProductFilter = {}, sort?: Sort<Product>): Promise<Connection<Product>> {
    const where: FilterQuery<Product>[] = [{ environmentId: this.ctx.environmentId }];
    if (filter.taxCode) where.push({ taxCode: filter.taxCode });
    if (filter.search) {
      const pattern = containing(filter.search);
      where.push({ $or: [{ name: { $ilike: pattern } }, { handle: { $ilike: pattern } }] });
    }
    return keysetPage(this.ctx.em, ProductSchema, { $and: where }, page, sort);
  }

  async create(input: ProductCreateInput): Promise<Product> {
    await this.checkTaxCode(input.taxCode);
    const product = this.ctx.em.create(ProductSchema, {
      environmentId: this.ctx.environmentId,
      name: input.name,
      handle: input.handle ?? null,
      description: input.description ?? null,
      taxCode: input.taxCode ?? null,
      metadata: withMetadata({}, input.metadata),
    });
    await this.flush();
    return product;
  }

  /** Applies the fields present in `input`; `null` clears a field, an absent one stays. */
  async update(id: string, input: ProductUpdateInput): Promise<Product> {
    const { em, environmentId } = this.ctx;
    const product = await managedOrNotFound(em, ProductSchema, environmentId, id, 'Product');
    await this.checkTaxCode(input.taxCode);
    const { metadata, ...fields } = input;
    const changes = { ...fields, metadata: withMetadata(product.metadata, metadata) };
    if (!applyChanges(product, changes as Partial<Product>)) return product;
    product.updatedAt = new Date();
    await this.flush();
    this.ctx.loaders.forget(productLoaders);
    return product;
  }

  private async checkTaxCode(code: string | null | undefined): Promise<void> {
    if (code != null && !(await new TaxCodeService(this.ctx).findByCode(code))) throw unknownTaxCode();
  }

  private flush(): Promise<void> {
    return flushOrFail(this.ctx.em, {
      unique: () =>
        DomainError.onField('DUPLICATE', ['handle'], 'another product of this environment has this handle'),
      // checkTaxCode answers first; the foreign key is the last word should the code vanish meanwhile.
      foreignKey: unknownTaxCode,
    });
  }
}

/** `current` with `change` applied: a key set to null is removed. At most METADATA_LIMITS.keys keys remain. */
function withMetadata(
  current: Record<string, unknown>,
  change: MetadataChange | undefined,
): Record<string, unknown> {
  if (change === undefined) return current;
  const next = { ...current };
  for (const [key, value] of Object.entries(change)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  const count = Object.keys(next).length;
  if (count > METADATA_LIMITS.keys) {
    throw DomainError.onField(
      'INVALID_INPUT',
      ['metadata'],
      `a product keeps at most ${METADATA_LIMITS.keys} metadata keys; this change would leave ${count}`,
    );
  }
  return next;
}
