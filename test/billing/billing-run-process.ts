/*
 * A billing run in a process of its own, for the tests that kill one part way:
 *   node billing-run-process.ts <database url> <environment id> <asOf> <customers before pausing>
 * It prints "paused" and hangs once that many customers are billed (0: never), until it is killed. It
 * bills in batches of that many customers, so the pause falls between two committed batches.
 *   node billing-run-process.ts <database url> <environment id> help <run id> <batch size>
 * helps run `run id` (BillingRunService.help) in batches of that size, and prints "helped <customers>".
 */
import { createJobContext } from '../../src/context.ts';
import { openOrm } from '../../src/db/orm.ts';
import { BillingRunService } from '../../src/modules/billing/billing-run.service.ts';
import { entities } from '../../src/modules/registry.ts';

const [databaseUrl, environmentId, action, ...rest] = process.argv.slice(2) as [
  string,
  string,
  string,
  ...string[],
];
const orm = await openOrm(databaseUrl, { entities, poolMax: 4 });
const ctx = createJobContext(orm.em.fork(), environmentId, 'billingRun');
if (action === 'help') {
  const [runId = '', batchSize] = rest;
  const helped = await new BillingRunService(ctx).help(runId, { batchSize: Number(batchSize) });
  process.stdout.write(`helped ${helped}\n`);
} else {
  const [asOf, pauseAfter] = [action, Number(rest[0])];
  const run = await new BillingRunService(ctx).run(new Date(asOf), {
    triggeredBy: 'schedule',
    batchSize: pauseAfter || undefined,
    onProgress: async ({ customersDone }) => {
      if (customersDone !== pauseAfter) return;
      process.stdout.write('paused\n');
      await new Promise(() => setInterval(() => {}, 60_000));
    },
  });
  process.stdout.write(`finished ${run.status}\n`);
}
await orm.close();
