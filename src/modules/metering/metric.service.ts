import type { RequestContext } from '../../context.ts';
import { flushOrFail } from '../../db/flush.ts';
import { managedOrNotFound } from '../../db/loaders.ts';
import { type Connection, keysetPage, type PageArgs } from '../../db/pagination.ts';
import { DomainError } from '../../errors.ts';
import { type BillableMetric, BillableMetricSchema } from './metering.entity.ts';
import type { MetricCreateInput, MetricUpdateInput } from './metering.input.ts';

/** Billable metrics of one environment: what usage events count for, and how. */
export class MetricService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  async get(id: string): Promise<BillableMetric> {
    const metric = await this.ctx.em.findOne(BillableMetricSchema, {
      id,
      environmentId: this.ctx.environmentId,
    });
    if (!metric) throw DomainError.notFound('Billable metric', id);
    return metric;
  }

  findByCode(code: string): Promise<BillableMetric | null> {
    return this.ctx.em.findOne(BillableMetricSchema, { environmentId: this.ctx.environmentId, code });
  }

  list(page: PageArgs): Promise<Connection<BillableMetric>> {
    return keysetPage(this.ctx.em, BillableMetricSchema, { environmentId: this.ctx.environmentId }, page);
  }

  async create(input: MetricCreateInput): Promise<BillableMetric> {
    const metric = this.ctx.em.create(BillableMetricSchema, {
      environmentId: this.ctx.environmentId,
      code: input.code,
      name: input.name,
      aggregation: input.aggregation,
      fieldName: input.aggregation === 'count' ? (input.fieldName ?? null) : (input.fieldName as string),
      filters: input.filters ?? {},
      rounding: input.rounding ?? 'none',
      roundingDecimals: input.roundingDecimals ?? 0,
      updatedAt: null,
    });
    await this.flush();
    return metric;
  }

  /** Changes name, filters and rounding; what is left out stays, null filters clear them. */
  async update(id: string, input: MetricUpdateInput): Promise<BillableMetric> {
    const { em, environmentId } = this.ctx;
    const metric = await managedOrNotFound(em, BillableMetricSchema, environmentId, id, 'Billable metric');
    if (input.name !== undefined) metric.name = input.name;
    if (input.filters !== undefined) metric.filters = input.filters ?? {};
    if (input.rounding !== undefined) metric.rounding = input.rounding;
    if (input.roundingDecimals !== undefined) metric.roundingDecimals = input.roundingDecimals;
    metric.updatedAt = new Date();
    await this.flush();
    return metric;
  }

  private flush(): Promise<void> {
    return flushOrFail(this.ctx.em, {
      unique: () =>
        DomainError.onField(
          'DUPLICATE',
          ['code'],
          'another billable metric of this environment has this code',
        ),
    });
  }
}
