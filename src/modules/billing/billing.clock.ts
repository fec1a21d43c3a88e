import { AccessService } from '../../auth/access.service.ts';
import type { ServiceContext } from '../../context.ts';
import { DomainError } from '../../errors.ts';

/** How far past this server's clock a run may be asked for in a live environment: clocks drift. */
export const CLOCK_SKEW_MS = 5 * 60 * 1000;

/**
 * Refuses a billing run as of a moment later than now in a live environment: what it bills (periods
 * up to that moment, renewals, ends) is booked and can never be billed again, so a live environment
 * bills the present only. Simulated time belongs to test environments.
 */
export async function assertBillableMoment(ctx: ServiceContext, asOf: Date): Promise<void> {
  if (asOf.getTime() <= Date.now() + CLOCK_SKEW_MS) return;
  const environment = await new AccessService(ctx.em).environment(ctx.environmentId);
  if (environment.kind === 'test') return;
  throw new DomainError(
    'INVALID_INPUT',
    `asOf ${asOf.toISOString()} is later than now: a live environment bills nothing ahead of time; ` +
      'simulate time in a test environment',
  );
}
