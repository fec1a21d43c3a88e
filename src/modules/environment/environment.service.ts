import { z } from 'zod';
import { type Environment, EnvironmentSchema, TAX_ROUNDINGS } from '../../auth/environment.entity.ts';
import type { ServiceContext } from '../../context.ts';

/** The settings an environment's own tokens may change; its name and kind are the administrator's. */
export const EnvironmentUpdateInput = z.strictObject({
  taxRounding: z.enum(TAX_ROUNDINGS).optional(),
});
export type EnvironmentUpdateInput = z.infer<typeof EnvironmentUpdateInput>;

/** The environment a request acts in, and its settings. */
export class EnvironmentService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  get(): Promise<Environment> {
    return this.ctx.em.findOneOrFail(EnvironmentSchema, { id: this.ctx.environmentId });
  }

  /**
   * Changes the settings present in `input`. Drafts take a new tax rounding the next time their lines
   * change and when they are booked; booked invoices keep the amounts they were booked with.
   */
  async update(input: EnvironmentUpdateInput): Promise<Environment> {
    const environment = await this.get();
    if (input.taxRounding !== undefined) environment.taxRounding = input.taxRounding;
    await this.ctx.em.flush();
    return environment;
  }
}
