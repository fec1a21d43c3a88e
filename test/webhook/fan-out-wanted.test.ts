import { describe, expect, it } from 'vitest';
import type { PublishedEvent } from '../../src/jobs/runner.ts';
import { listenerJobs } from '../../src/modules/event/event.relay.ts';
import { eventListeners } from '../../src/modules/registry.ts';
import { WEBHOOK_FAN_OUT_TASK } from '../../src/modules/webhook/webhook.dispatcher.ts';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

const CREATE = `mutation ($input: WebhookEndpointCreateInput!) {
  webhookEndpointCreate(input: $input) { webhookEndpoint { id } userErrors { code } }
}`;
const DISABLE = `mutation ($id: UUID!) { webhookEndpointDisable(id: $id) { userErrors { code } } }`;

/**
 * What the event relay hands a customer's creation event to, with the application's own listeners:
 * the tasks of the jobs it would add (what it decides is read from the real database).
 */
async function listenersOfNewCustomer(env: TestEnvironment): Promise<string[]> {
  const customerId = await f.createCustomer(env, { name: 'Listened to' });
  const [event] = await t.sql<{ id: string }>(
    `select id from event where object_id = $1 and type = 'customer.created'`,
    [customerId],
  );
  const published: PublishedEvent = {
    eventId: event?.id as string,
    environmentId: env.id,
    type: 'customer.created',
  };
  const jobs = await listenerJobs([published], eventListeners, t.orm);
  // The relay's batched look (one read as the owner) answers the same.
  const batched = await listenerJobs([published], eventListeners, t.orm, t.sql);
  expect(batched).toEqual(jobs);
  for (const job of jobs) {
    expect(job.payload).toEqual(published);
    expect(job.jobKey).toBe(`${job.identifier}:${published.eventId}`);
  }
  return jobs.map((job) => job.identifier);
}

describe('webhook fan-out only where an endpoint listens', () => {
  it('adds no fan-out job for an event no enabled endpoint wants, and one when an endpoint does', async () => {
    const env = await t.createEnvironment('Fan-out wanted');

    // no endpoint at all: nothing to fan out
    expect(await listenersOfNewCustomer(env)).not.toContain(WEBHOOK_FAN_OUT_TASK);

    // an endpoint for other types only: still nothing
    const other = await f.gql(env, CREATE, {
      input: { url: 'https://example.com/hooks/other', eventTypes: ['INVOICE_BOOKED'] },
    });
    expect(other.webhookEndpointCreate.userErrors).toEqual([]);
    expect(await listenersOfNewCustomer(env)).not.toContain(WEBHOOK_FAN_OUT_TASK);

    // an endpoint for every type: the event fans out
    const all = await f.gql(env, CREATE, { input: { url: 'https://example.com/hooks/all' } });
    expect(all.webhookEndpointCreate.userErrors).toEqual([]);
    expect(await listenersOfNewCustomer(env)).toContain(WEBHOOK_FAN_OUT_TASK);

    // that endpoint disabled: nothing again; another environment's endpoints never count
    const disabled = await f.gql(env, DISABLE, { id: all.webhookEndpointCreate.webhookEndpoint.id });
    expect(disabled.webhookEndpointDisable.userErrors).toEqual([]);
    expect(await listenersOfNewCustomer(env)).not.toContain(WEBHOOK_FAN_OUT_TASK);

    const elsewhere = await t.createEnvironment('Fan-out elsewhere');
    await f.gql(elsewhere, CREATE, { input: { url: 'https://example.com/hooks/elsewhere' } });
    expect(await listenersOfNewCustomer(env)).not.toContain(WEBHOOK_FAN_OUT_TASK);
    expect(await listenersOfNewCustomer(elsewhere)).toContain(WEBHOOK_FAN_OUT_TASK);
  });
});
