import { randomUUID } from 'node:crypto';
import type { JobHelpers, Task } from 'graphile-worker';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { APP_ROLE } from '../../src/db/orm.ts';
import { inEnvironment } from '../../src/db/tenant-transaction.ts';
import {
  type EventListener,
  type JobRunner,
  type PublishedEvent,
  startJobRunner,
} from '../../src/jobs/runner.ts';
import { EVENT_PUBLISHED_TASK, eventTasks } from '../../src/modules/event/event.jobs.ts';
import { EventRelay, type RelayBatch } from '../../src/modules/event/event.relay.ts';
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
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/** The outbox rows waiting for the events of `objectId`. */
const waiting = (objectId: string) =>
  t.sql<{ event_id: string; environment_id: string; type: string }>(
    `select o.event_id, o.environment_id, o.type from event_relay.outbox o
     join event e on e.id = o.event_id where e.object_id = $1`,
    [objectId],
  );

/** The jobs of `task` the queue holds, by key. */
const jobsOf = (task: string) =>
  t.sql<{ key: string; payload: PublishedEvent }>(
    `select j.key, j.payload from graphile_worker._private_jobs j
     join graphile_worker._private_tasks task on task.id = j.task_id
     where task.identifier = $1 order by j.id`,
    [task],
  );

/** Events of `type` written straight into the table in one statement, as a multi-row insert does. */
async function insertEvents(environmentId: string, type: string, count: number): Promise<string[]> {
  const rows = await t.sql<{ id: string }>(
    `insert into event (id, environment_id, type, object_type, object_id, data, created_at)
     select gen_random_uuid(), $1, $2, 'customer', gen_random_uuid(), '{}', now() from generate_series(1, $3)
     returning id`,
    [environmentId, type, count],
  );
  return rows.map((row) => row.id);
}

/** The migration that replaced the event-published trigger by the outbox. */
const OUTBOX_MIGRATION = 'Migration20261126000000EventOutbox';

const relayOf = (listeners: EventListener[], options: { batchSize?: number } = {}) =>
  new EventRelay({ connectionString: t.databaseUrl, orm: t.orm, listeners, logger, ...options });

describe('the event outbox', () => {
  it('holds a row for every committed event, none for a rolled-back one, and none the application role can read', async () => {
    const env = await t.createEnvironment('Outboxed');

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

    // then the committed change's event waits in the outbox, and the other left neither event nor row
    const [row] = await waiting(customerId);
    expect(row).toMatchObject({ environment_id: env.id, type: 'customer.created' });
    expect(await waiting(lost)).toEqual([]);
    expect(await t.sql('select id from event where object_id = $1', [lost])).toEqual([]);
    // and no job per event any more
    expect((await jobsOf(EVENT_PUBLISHED_TASK)).length).toBe(0);

    // and the application role may not even look at the outbox, in its environment or not
    const client = new pg.Client({ connectionString: t.databaseUrl });
    await client.connect();
    try {
      await client.query(`set role ${pg.escapeIdentifier(APP_ROLE)}`);
      await client.query('begin');
      await client.query(`select set_config('app.environment_id', $1, true)`, [env.id]);
      await expect(client.query('select * from event_relay.outbox')).rejects.toMatchObject({ code: '42501' });
      await client.query('rollback');
    } finally {
      await client.end();
    }
  });
});

describe('the event relay', () => {
  const runners: JobRunner[] = [];
  const relays: EventRelay[] = [];

  afterAll(async () => {
    await Promise.all(relays.map((relay) => relay.stop()));
    await Promise.all(runners.map((runner) => runner.stop()));
  });

  it('hands each event to the listeners of its type that want it, once, through a job worker', async () => {
    // given a worker running a probe task, and a relay whose only listener is the probe for customer.created
    await t.sql('create table listener_probe (event_id uuid not null, type text not null)');
    const probe: Task = async (payload, helpers) => {
      const event = payload as PublishedEvent;
      await helpers.query('insert into listener_probe values ($1, $2)', [event.eventId, event.type]);
    };
    runners.push(
      await startJobRunner({
        connectionString: t.databaseUrl,
        concurrency: 2,
        tasks: { probe },
        cron: [],
        logger,
      }),
    );
    const relay = relayOf([{ task: 'probe', types: ['customer.created'] }]);
    relays.push(relay);
    await relay.start();

    // when a customer is created and then updated
    const env = await t.createEnvironment('Listened');
    const customerId = await f.createCustomer(env, { name: 'Heard' });
    const patched = await t.rest('PATCH', `/customers/${customerId}`, { env, body: { name: 'Heard again' } });
    expect(patched.status).toBe(200);

    // then the listener got the creation once with the payload it always had, and nothing of the update;
    // and the outbox holds neither event any more
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
    await until(async () => (await waiting(customerId)).length === 0, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await heard()).toEqual([{ event_id: created?.id, type: 'customer.created' }]);
    await relay.stop();
  });

  it('adds no job for an event no listener wants, and still empties its outbox row; wants is asked once per environment and type', async () => {
    // given events of one environment and type, and a listener that wants none of them
    const env = await t.createEnvironment('Unheard');
    const ids = await insertEvents(env.id, 'relay.unheard', 30);
    const asked: string[] = [];
    const relay = relayOf([
      {
        task: 'unheard-probe',
        types: ['relay.unheard'],
        wants: async ({ environmentId, type }) => {
          asked.push(`${environmentId} ${type}`);
          return false;
        },
      },
    ]);
    relays.push(relay);

    // when the relay takes the outbox
    let batch: RelayBatch;
    do batch = await relay.relayBatch();
    while (batch.taken > 0);

    // then no row and no job is left of them, and the listener was asked once
    const [left] = await t.sql<{ n: number }>(
      'select count(*)::int as n from event_relay.outbox where event_id = any($1::uuid[])',
      [ids],
    );
    expect(left?.n).toBe(0);
    expect(await jobsOf('unheard-probe')).toEqual([]);
    expect(asked).toEqual([`${env.id} relay.unheard`]);
    await relay.stop();
  });

  it('asks a listener that can answer for a whole batch once per batch, on the relay’s connection', async () => {
    // given events of two environments and two types, and a listener wanting one environment's of one type
    const [wanted, unwanted] = [await t.createEnvironment('Batch A'), await t.createEnvironment('Batch B')];
    const ids = {
      wanted: await insertEvents(wanted.id, 'relay.batched.x', 3),
      otherType: await insertEvents(wanted.id, 'relay.batched.y', 2),
      otherEnvironment: await insertEvents(unwanted.id, 'relay.batched.x', 2),
    };
    const calls: string[][] = [];
    let askedOne = 0;
    const relay = relayOf([
      {
        task: 'batched-probe',
        types: ['relay.batched.x', 'relay.batched.y'],
        wants: async () => {
          askedOne += 1;
          return true;
        },
        wantsAll: async (scopes, query) => {
          calls.push(scopes.map(({ environmentId, type }) => `${environmentId} ${type}`).sort());
          // one read as the owner, in the relay's transaction: the outbox rows it took are gone there
          const [row] = await query<{ n: number }>(
            'select count(*)::int as n from event_relay.outbox where event_id = any($1::uuid[])',
            [[...ids.wanted, ...ids.otherType, ...ids.otherEnvironment]],
          );
          expect(row?.n).toBe(0);
          return scopes.map(
            ({ environmentId, type }) => environmentId === wanted.id && type === 'relay.batched.x',
          );
        },
      },
    ]);
    relays.push(relay);

    // when the relay takes them in one batch
    let batch: RelayBatch;
    do batch = await relay.relayBatch();
    while (batch.taken > 0);

    // then the listener was asked once, for the three environment and type pairs, and got the wanted jobs
    expect(calls).toEqual([
      [
        `${unwanted.id} relay.batched.x`,
        `${wanted.id} relay.batched.x`,
        `${wanted.id} relay.batched.y`,
      ].sort(),
    ]);
    expect(askedOne).toBe(0);
    expect((await jobsOf('batched-probe')).map((job) => job.key).sort()).toEqual(
      ids.wanted.map((id) => `batched-probe:${id}`).sort(),
    );
    await relay.stop();
  });

  it('delivers what waited in the outbox while no relay ran once one starts', async () => {
    // given events written while nothing relayed (their notifications heard by nobody)
    const env = await t.createEnvironment('Waited');
    const ids = await insertEvents(env.id, 'relay.waited', 5);
    const [before] = await t.sql<{ n: number }>(
      'select count(*)::int as n from event_relay.outbox where event_id = any($1::uuid[])',
      [ids],
    );
    expect(before?.n).toBe(5);

    // when a relay starts
    const relay = relayOf([{ task: 'waited-probe', types: ['relay.waited'] }]);
    relays.push(relay);
    await relay.start();

    // then each got its listener's job, keyed by task and event, and the outbox let them go
    await until(async () => (await jobsOf('waited-probe')).length === 5, 10_000);
    const jobs = await jobsOf('waited-probe');
    expect(jobs.map((job) => job.key).sort()).toEqual(ids.map((id) => `waited-probe:${id}`).sort());
    for (const job of jobs) {
      expect(`waited-probe:${job.payload.eventId}`).toBe(job.key);
      expect(job.payload).toEqual({
        eventId: job.payload.eventId,
        environmentId: env.id,
        type: 'relay.waited',
      });
    }
    const [after] = await t.sql<{ n: number }>(
      'select count(*)::int as n from event_relay.outbox where event_id = any($1::uuid[])',
      [ids],
    );
    expect(after?.n).toBe(0);
    await relay.stop();
  });

  it("leaves a failed batch's rows in the outbox, and hands them out on the next try", async () => {
    // given waiting events and a listener whose first look fails (a batch cut off half-way)
    const env = await t.createEnvironment('Failed once');
    const ids = await insertEvents(env.id, 'relay.failed', 3);
    let looks = 0;
    const relay = relayOf([
      {
        task: 'failed-probe',
        types: ['relay.failed'],
        wants: async () => {
          looks += 1;
          if (looks === 1) throw new Error('the look fails');
          return true;
        },
      },
    ]);
    relays.push(relay);
    const left = async () =>
      (
        await t.sql<{ n: number }>(
          'select count(*)::int as n from event_relay.outbox where event_id = any($1::uuid[])',
          [ids],
        )
      )[0]?.n;

    // when the first batch fails, then the relay tries again
    await expect(relay.relayBatch()).rejects.toThrow('the look fails');
    expect(await left()).toBe(3);
    expect(await jobsOf('failed-probe')).toEqual([]);
    let batch: RelayBatch;
    do batch = await relay.relayBatch();
    while (batch.taken > 0);

    // then every event got its job once, and the outbox let them go
    expect((await jobsOf('failed-probe')).map((job) => job.key).sort()).toEqual(
      ids.map((id) => `failed-probe:${id}`).sort(),
    );
    expect(await left()).toBe(0);
    await relay.stop();
  });

  it('never hands one row to two relays running at once', async () => {
    // given 300 waiting events and two relays taking small batches at the same time, each batch held
    // open a moment by its listener's look
    const env = await t.createEnvironment('Raced');
    const ids = await insertEvents(env.id, 'relay.raced', 300);
    const [waitingBefore] = await t.sql<{ n: number }>('select count(*)::int as n from event_relay.outbox');
    const listeners: EventListener[] = [
      {
        task: 'raced-probe',
        types: ['relay.raced'],
        wants: () => new Promise((resolve) => setTimeout(() => resolve(true), 5)),
      },
    ];
    const pair = [relayOf(listeners, { batchSize: 7 }), relayOf(listeners, { batchSize: 7 })];
    relays.push(...pair);
    const drain = async (relay: EventRelay) => {
      const batches: RelayBatch[] = [];
      for (;;) {
        const batch = await relay.relayBatch();
        if (batch.taken === 0) return batches;
        batches.push(batch);
      }
    };

    // when both drain the outbox
    const [first, second] = await Promise.all(pair.map(drain));

    // then they shared the rows (both took some), took each once, and added one job per event
    const sum = (batches: RelayBatch[] | undefined, field: keyof RelayBatch) =>
      (batches ?? []).reduce((total, batch) => total + batch[field], 0);
    expect(sum(first, 'taken')).toBeGreaterThan(0);
    expect(sum(second, 'taken')).toBeGreaterThan(0);
    expect(sum(first, 'taken') + sum(second, 'taken')).toBe(waitingBefore?.n);
    expect(sum(first, 'jobs') + sum(second, 'jobs')).toBe(300);
    const jobs = await jobsOf('raced-probe');
    expect(jobs.map((job) => job.key).sort()).toEqual(ids.map((id) => `raced-probe:${id}`).sort());
    await Promise.all(pair.map((relay) => relay.stop()));
  });

  it('still hands out an event-published job the former trigger queued', async () => {
    const env = await t.createEnvironment('Former');
    const published: PublishedEvent = {
      eventId: randomUUID(),
      environmentId: env.id,
      type: 'customer.created',
    };
    const task = eventTasks({
      orm: t.orm,
      logger,
      settings: { eventRetentionDays: 30, mail: null },
      eventListeners: [
        { task: 'former-probe', types: ['customer.created'] },
        { task: 'other', types: ['invoice.booked'] },
      ],
    })[EVENT_PUBLISHED_TASK] as Task;
    const added: unknown[] = [];
    await task(published, {
      addJobs: async (jobs: unknown[]) => {
        added.push(...jobs);
        return [];
      },
    } as unknown as JobHelpers);
    expect(added).toEqual([
      { identifier: 'former-probe', payload: published, jobKey: `former-probe:${published.eventId}` },
    ]);
  });

  it('migrated down, gets the event-published trigger back with a job for every row that waited; up again, the outbox', async () => {
    // given events waiting in the outbox
    const env = await t.createEnvironment('Migrated down');
    const waitingIds = await insertEvents(env.id, 'relay.down', 2);
    const published = async (ids: string[]) =>
      (await jobsOf(EVENT_PUBLISHED_TASK))
        .map((job) => job.payload)
        .filter((payload) => ids.includes(payload.eventId));

    // when the outbox migration is rolled back
    await t.adminOrm.migrator.down({ migrations: [OUTBOX_MIGRATION] });

    // then what waited became event-published jobs, and a new event adds one again; the outbox is gone
    expect((await published(waitingIds)).sort((a, b) => a.eventId.localeCompare(b.eventId))).toEqual(
      [...waitingIds].sort().map((eventId) => ({ eventId, environmentId: env.id, type: 'relay.down' })),
    );
    const [later] = await insertEvents(env.id, 'relay.down', 1);
    expect(await published([later as string])).toHaveLength(1);
    expect(await t.sql(`select 1 from pg_namespace where nspname = 'event_relay'`)).toEqual([]);

    // and migrated up again, events go to the outbox, not to the queue
    await t.adminOrm.migrator.up({ migrations: [OUTBOX_MIGRATION] });
    const [again] = await insertEvents(env.id, 'relay.down', 1);
    expect(await published([again as string])).toEqual([]);
    expect(await t.sql('select event_id from event_relay.outbox where event_id = $1', [again])).toHaveLength(
      1,
    );
  });
});
