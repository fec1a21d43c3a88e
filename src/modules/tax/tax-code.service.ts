import type { FilterQuery } from '@mikro-orm/core';
import type { RequestContext } from '../../context.ts';
import { flushOrFail } from '../../db/flush.ts';
import { type Connection, containing, keysetPage, type PageArgs, type Sort } from '../../db/pagination.ts';
import { DomainError } from '../../errors.ts';
import { type TaxCode, TaxCodeSchema } from './tax-code.entity.ts';
import type { TaxCodeCreateInput, TaxCodeUpdateInput } from './tax-code.input.ts';

/** Tax codes of one environment. Products and invoice items name them by `code`. */
export class TaxCodeService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  /** The tax code with this code, or null when the environment has none. */
  findByCode(code: string): Promise<TaxCode | null> {
    return this.ctx.em.findOne(TaxCodeSchema, { environmentId: this.ctx.environmentId, code });
  }

  async get(id: string): Promise<TaxCode> {
    const taxCode = await this.ctx.em.findOne(TaxCodeSchema, { environmentId: this.ctx.environmentId, id });
    if (!taxCode) throw DomainError.notFound('Tax code', id);
    return taxCode;
  }

  /** `search`: part of the code or description, in any case. */
  list(
    page: PageArgs,
    filter: { search?: string | null } = {},
    sort?: Sort<TaxCode>,
  ): Promise<Connection<TaxCode>> {
    const where: FilterQuery<TaxCode>[] = [{ environmentId: this.ctx.environmentId }];
    if (filter.search) {
      const pattern = containing(filter.search);
      where.push({ $or: [{ code: { $ilike: pattern } }, { description: { $ilike: pattern } }] });
    }
    return keysetPage(this.ctx.em, TaxCodeSchema, { $and: where }, page, sort);
  }

  async create(input: TaxCodeCreateInput): Promise<TaxCode> {
    const taxCode = this.ctx.em.create(TaxCodeSchema, {
      environmentId: this.ctx.environmentId,
      code: input.code,
      rate: input.rate,
      description: input.description ?? null,
    });
    await this.flush();
    return taxCode;
  }

  /** Changes the rate for what is invoiced from now on; invoice items keep the rate they were created with. */
  async update(id: string, input: TaxCodeUpdateInput): Promise<TaxCode> {
    const taxCode = await this.get(id);
    if (input.rate !== undefined) taxCode.rate = input.rate;
    if (input.description !== undefined) taxCode.description = input.description;
    taxCode.updatedAt = new Date();
    await this.flush();
    return taxCode;
  }

  private flush(): Promise<void> {
    return flushOrFail(this.ctx.em, {
      unique: () =>
        DomainError.onField('DUPLICATE', ['code'], 'the environment already has a tax code with this code'),
    });
  }
}
