import { randomUUID } from 'node:crypto';
import type { Task } from 'graphile-worker';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { inEnvironment } from '../../src/db/tenant-transaction.ts';
import { type JobRunner, type PublishedEvent, startJobRunner } from '../../src/jobs/runner.ts';
import { EVENT_PUBLISHED_TASK, eventTasks } from '../../src/modules/event/event.jobs.ts';
import { recordEvent } from '../../src/modules/event/event.service.ts';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp } from '../support/harness.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);
const logger = pino({ level: 'silent' });

const until = async (check: () => Promise<boolean>, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

const publishedJobs = (objectId: string) =>
  t.sql<{ payload: PublishedEvent }>(
    `select j.payload from graphile_worker._private_jobs j
     join graphile_worker._private_tasks task on task.id = j.task_id
     join event e on e.id = (j.payload->>'eventId')::uuid
     where task.identifier = $1 and e.object_id = $2`,
    [EVENT_PUBLISHED_TASK, objectId],
  );

describe('events handed to the job queue', () => {
  const runners: JobRunner[] = [];

  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.stop()));
  });

  it('adds an event-published job with every committed event, and none for a rolled-back one', async () => {
    const env = await t.createEnvironment('Published');

    // given a change that commits, and one that rolls back after writing its event
    const customerId = await f.createCustomer(env, { name: 'Committed' });
    const lost = randomUUID();
    await expect(
      inEnvironment(t.orm.em, env.id, async (em) => {
        recordEvent(em, env.id, {
          type: 'customer.created',
          objectType: 'customer',
          objectId: lost,
          data: {},
        });
        await em.flush();
        throw new Error('the change fails after its event was written');
      }),
    ).rejects.toThrow('the change fails');

    // then the committed change's event waits in the queue, and the other left neither event nor job
    const [job] = await publishedJobs(customerId);
    expect(job?.payload).toMatchObject({ environmentId: env.id, type: 'customer.created' });
    expect(await publishedJobs(lost)).toEqual([]);
    expect(await t.sql('select id from event where object_id = $1', [lost])).toEqual([]);
  });

  it('hands each event to the listeners of its type, once', async () => {
    // given a worker whose only listener wants customer.created
    await t.sql('create table listener_probe (event_id uuid not null, type text not null)');
    const probe: Task = async (payload, helpers) => {
      const event = payload as PublishedEvent;
      await helpers.query('insert into listener_probe values ($1, $2)', [event.eventId, event.type]);
    };
    const tasks = eventTasks({
      orm: t.orm,
      logger,
      settings: { eventRetentionDays: 30, mail: null },
      eventListeners: [{ task: 'probe', types: ['customer.created'] }],
    });
    runners.push(
      await startJobRunner({
        connectionString: t.databaseUrl,
        concurrency: 2,
        tasks: { [EVENT_PUBLISHED_TASK]: tasks[EVENT_PUBLISHED_TASK] as Task, probe },
        cron: [],
        logger,
      }),
    );

    // when a customer is created and then updated
    const env = await t.createEnvironment('Listened');
    const customerId = await f.createCustomer(env, { name: 'Heard' });
    const patched = await t.rest('PATCH', `/customers/${customerId}`, { env, body: { name: 'Heard again' } });
    expect(patched.status).toBe(200);

    // then the listener got the creation once, and not the update
    const [created] = await t.sql<{ id: string }>(
      `select id from event where object_id = $1 and type = 'customer.created'`,
      [customerId],
    );
    const heard = () =>
      t.sql<{ event_id: string; type: string }>(
        `select p.event_id, p.type from listener_probe p join event e on e.id = p.event_id where e.object_id = $1`,
        [customerId],
      );
    await until(async () => (await heard()).length > 0, 15_000);
    await until(async () => (await publishedJobs(customerId)).length === 0, 15_000);
    expect(await heard()).toEqual([{ event_id: created?.id, type: 'customer.created' }]);
  });
});
