import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { RequestContext } from '../../context.ts';
import { newId } from '../../db/ids.ts';
import { cachedRead } from '../../db/read-cache.ts';
import { LATE_EVENT_POLICIES, type MeteringSettings, MeteringSettingsSchema } from './metering.entity.ts';

/** Late events adjust the next invoice; arrears usage is billed as soon as its period ends. */
export const DEFAULT_METERING_SETTINGS = { lateEvents: 'adjust_next', gracePeriodHours: 0 } as const;

export const MeteringSettingsUpdateInput = z.strictObject({
  lateEvents: z.enum(LATE_EVENT_POLICIES).optional(),
  gracePeriodHours: z.number().int().min(0).max(720).optional(),
});
export type MeteringSettingsUpdateInput = z.infer<typeof MeteringSettingsUpdateInput>;

/** An environment's metering settings as they apply: its own row, or the defaults. */
export async function effectiveMeteringSettings(
  em: EntityManager,
  environmentId: string,
): Promise<MeteringSettings> {
  const stored = await cachedRead(`metering-settings:${environmentId}`, () =>
    em.findOne(MeteringSettingsSchema, { environmentId }),
  );
  return (
    stored ?? ({ id: '', environmentId, ...DEFAULT_METERING_SETTINGS, updatedAt: null } as MeteringSettings)
  );
}

export class MeteringSettingsService {
  private readonly ctx: RequestContext;

  constructor(ctx: RequestContext) {
    this.ctx = ctx;
  }

  get(): Promise<MeteringSettings> {
    return effectiveMeteringSettings(this.ctx.em, this.ctx.environmentId);
  }

  async update(input: MeteringSettingsUpdateInput): Promise<MeteringSettings> {
    const { em, environmentId } = this.ctx;
    // One row per environment: two first updates at once must not both insert it.
    await em.execute(
      `insert into metering_settings (id, environment_id, late_events, grace_period_hours)
       values (?, ?, ?, ?) on conflict (environment_id) do nothing`,
      [
        newId(),
        environmentId,
        DEFAULT_METERING_SETTINGS.lateEvents,
        DEFAULT_METERING_SETTINGS.gracePeriodHours,
      ],
    );
    const settings = await em.findOneOrFail(MeteringSettingsSchema, { environmentId }, { refresh: true });
    if (input.lateEvents !== undefined) settings.lateEvents = input.lateEvents;
    if (input.gracePeriodHours !== undefined) settings.gracePeriodHours = input.gracePeriodHours;
    settings.updatedAt = new Date();
    await em.flush();
    return settings;
  }
}
