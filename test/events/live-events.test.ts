import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { inEnvironment } from '../../src/db/tenant-transaction.ts';
import { MAX_STREAMS_PER_TOKEN } from '../../src/modules/event/event.feed.ts';
import { recordEvent } from '../../src/modules/event/event.service.ts';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

type Received = {
  data?: { events: { type: string; objectId: string; data: { name?: string } } };
  errors?: { message: string; extensions?: { code?: string } }[];
};

/** A subscription over Server-Sent Events, as a browser's fetch-based client sends it: what it receives, and a way to end it. */
async function subscribe(env: TestEnvironment, query: string, variables: Record<string, unknown> = {}) {
  const abort = new AbortController();
  const response = await t.app.fetch('http://test/graphql', {
    method: 'POST',
    headers: { ...env.headers, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  const received: Received[] = [];
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const message = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = message
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trim())
          .join('');
        if (data) received.push(JSON.parse(data));
      }
    }
  })();
  return {
    response,
    received,
    close: async () => {
      abort.abort();
      await reader.cancel().catch(() => {});
      await reading;
    },
  };
}

const until = async (check: () => boolean, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

const EVENTS = `subscription ($types: [EventType!], $objectId: UUID) {
  events(types: $types, objectId: $objectId) { type objectId data } }`;

describe('live events over Server-Sent Events', () => {
  const open: { close: () => Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((stream) => stream.close()));
  });

  it('streams the committed events of its own environment only, as they commit', async () => {
    const env = await t.createEnvironment('Live');
    const other = await t.createEnvironment('Elsewhere');
    const stream = await subscribe(env, EVENTS, { types: ['CUSTOMER_CREATED', 'CUSTOMER_UPDATED'] });
    open.push(stream);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toContain('text/event-stream');

    // when: a change that rolls back after writing its event, one in another environment, and two that commit
    await expect(
      inEnvironment(t.orm.em, env.id, async (em) => {
        recordEvent(em, env.id, {
          type: 'customer.created',
          objectType: 'customer',
          objectId: randomUUID(),
          data: { name: 'Ghost' },
        });
        await em.flush();
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await f.createCustomer(other, { name: 'Not yours' });
    const created = await f.createCustomer(env, { name: 'Ada' });
    const patched = await t.rest('PATCH', `/customers/${created}`, { env, body: { name: 'Ada L.' } });
    expect(patched.status).toBe(200);

    // then the stream shows exactly the two committed changes of its environment, in order
    await until(() => stream.received.length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stream.received).toEqual([
      {
        data: {
          events: {
            type: 'CUSTOMER_CREATED',
            objectId: created,
            data: expect.objectContaining({ name: 'Ada' }),
          },
        },
      },
      {
        data: {
          events: {
            type: 'CUSTOMER_UPDATED',
            objectId: created,
            data: expect.objectContaining({ name: 'Ada L.' }),
          },
        },
      },
    ]);
  });

  it('hears events written by another connection (another server process), filtered by object', async () => {
    const env = await t.createEnvironment('Cross-process');
    const watched = randomUUID();
    const stream = await subscribe(env, EVENTS, { objectId: watched });
    open.push(stream);
    await new Promise((resolve) => setTimeout(resolve, 200));

    // when another process commits events about two objects, through its own connection
    for (const objectId of [randomUUID(), watched]) {
      await t.sql(
        `insert into event (id, environment_id, type, object_type, object_id, data, created_at)
         values ($1, $2, 'invoice.overdue', 'invoice', $3, '{"id": "x"}', now())`,
        [randomUUID(), env.id, objectId],
      );
    }

    // then only the watched object's event arrives
    await until(() => stream.received.length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stream.received).toEqual([
      { data: { events: { type: 'INVOICE_OVERDUE', objectId: watched, data: { id: 'x' } } } },
    ]);
  });

  it(`refuses a token's stream beyond ${MAX_STREAMS_PER_TOKEN} open at once, and takes it once one closes`, async () => {
    const env = await t.createEnvironment('Many streams');
    const streams = [];
    for (let n = 0; n < MAX_STREAMS_PER_TOKEN; n += 1) streams.push(await subscribe(env, EVENTS));
    open.push(...streams);
    await new Promise((resolve) => setTimeout(resolve, 200));

    const refused = await subscribe(env, EVENTS);
    open.push(refused);
    await until(() => refused.received.length > 0);
    expect(refused.received[0]?.errors?.[0]?.extensions?.code).toBe('TOO_MANY_STREAMS');

    await streams[0]?.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const taken = await subscribe(env, EVENTS);
    open.push(taken);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(taken.received).toEqual([]);
    expect(taken.response.status).toBe(200);
  });
});
