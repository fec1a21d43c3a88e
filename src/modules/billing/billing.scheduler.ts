import type { MikroORM } from '@mikro-orm/postgresql';
import { AccessService } from '../../auth/access.service.ts';
import { createJobContext } from '../../context.ts';
import { DomainError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { BillingRunService } from './billing-run.service.ts';

/**
 * The server's periodic billing: at start and then every `intervalMs`, a billing run as of now in
 * every environment, one after the other. Every server process may run it: the billing-run lock lets
 * one run at a time act on an environment, and an environment whose run is under way elsewhere is
 * skipped until the next tick. A tick never overlaps the previous one.
 */
export class BillingScheduler {
  private readonly orm: MikroORM;
  private readonly logger: Logger;
  private readonly intervalMs: number;
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;

  constructor(orm: MikroORM, logger: Logger, intervalMs: number) {
    this.orm = orm;
    this.logger = logger;
    this.intervalMs = intervalMs;
  }

  start(): void {
    this.tick();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  /** Stops ticking; a run under way stops after the customer it is billing (and ends `interrupted`). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.abort.abort();
    await this.ticking;
  }

  private tick(): void {
    if (this.ticking || this.abort.signal.aborted) return;
    this.ticking = this.runEverywhere(new Date()).finally(() => {
      this.ticking = undefined;
    });
  }

  private async runEverywhere(asOf: Date): Promise<void> {
    // The application role reads environments without one chosen; tenant rows it reads and writes
    // only in the transactions each run opens in its environment (inEnvironment).
    let environments: { id: string }[];
    try {
      environments = await new AccessService(this.orm.em.fork()).listEnvironments();
    } catch (error) {
      this.logger.warn({ err: error }, 'billing runs skipped: could not list the environments');
      return;
    }
    for (const { id: environmentId } of environments) {
      if (this.abort.signal.aborted) return;
      const ctx = createJobContext(this.orm.em.fork(), environmentId, 'billingRun');
      try {
        const run = await new BillingRunService(ctx).run(asOf, {
          triggeredBy: 'schedule',
          signal: this.abort.signal,
          onProgress: ({ runId, customersDone }) =>
            this.logger.debug({ environmentId, runId, customersDone }, 'billing run progress'),
        });
        const { id, status, invoiceCount, periodCount, renewalCount, endedCount, errors } = run;
        const summary = {
          environmentId,
          runId: id,
          status,
          invoiceCount,
          periodCount,
          renewalCount,
          endedCount,
        };
        if (errors.length > 0)
          this.logger.warn({ ...summary, errors }, 'billing run could not bill some customers');
        else if (periodCount + renewalCount + endedCount > 0)
          this.logger.info(summary, 'billing run finished');
      } catch (error) {
        if (error instanceof DomainError && error.code === 'CONFLICT') {
          this.logger.debug(
            { environmentId },
            'billing run skipped: another run of the environment is under way',
          );
        } else {
          this.logger.error({ err: error, environmentId }, 'billing run failed');
        }
      }
    }
  }
}
