import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRequestContext, inRequestTransaction } from '../../../src/context.ts';
import { inEnvironment } from '../../../src/db/tenant-transaction.ts';
import { CustomerSchema } from '../../../src/modules/customer/customer.entity.ts';
import { setupTestApp, type TestEnvironment } from '../../support/harness.ts';

const t = setupTestApp();

const AUDIT = `query ($objectId: UUID, $first: Int, $after: String) {
  auditEvents(objectId: $objectId, first: $first, after: $after) {
    edges { node { id action objectType objectId operation tokenId changedFields occurredAt } }
    pageInfo { hasNextPage endCursor }
  }
}`;

async function auditEvents(env: TestEnvironment, variables: Record<string, unknown>) {
  const response = await t.graphql(AUDIT, variables, { env });
  expect(response.body.errors).toBeUndefined();
  return response.body.data.auditEvents.edges.map((edge: { node: unknown }) => edge.node);
}

async function createCustomer(env: TestEnvironment, input: Record<string, unknown>, headers = {}) {
  const response = await t.graphql(
    'mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } userErrors { code } } }',
    { input },
    { env, headers },
  );
  return response.body.data.customerCreate;
}

describe('audit trail', () => {
  let env: TestEnvironment;
  let other: TestEnvironment;
  let tokenId: string;

  beforeAll(async () => {
    env = await t.createEnvironment('Main');
    other = await t.createEnvironment('Other');
    const [token] = await t.sql<{ id: string }>('select id from api_token where $1 = any(environment_ids)', [
      env.id,
    ]);
    tokenId = token?.id as string;
  });

  it('records a create through GraphQL and an update through REST, with token and operation', async () => {
    // given a customer created through GraphQL and renamed through REST
    const { customer } = await createCustomer(env, { name: 'Audited', handle: 'audited' });
    const patched = await t.rest('PATCH', `/customers/${customer.id}`, { env, body: { name: 'Renamed' } });
    expect(patched.status).toBe(200);

    // when the trail of that customer is read
    const events = await auditEvents(env, { objectId: customer.id });

    // then both writes are there, oldest first
    expect(events).toMatchObject([
      {
        action: 'create',
        objectType: 'Customer',
        objectId: customer.id,
        operation: 'customerCreate',
        tokenId,
        changedFields: [],
      },
      {
        action: 'update',
        objectType: 'Customer',
        objectId: customer.id,
        operation: 'PATCH /customers/{customerId}',
        tokenId,
      },
    ]);
    expect(events[1].changedFields).toEqual(expect.arrayContaining(['name', 'updatedAt']));
    expect(events[1].changedFields).not.toContain('email');
    const [row] = await t.sql('select environment_id, occurred_at from audit_event where id = $1', [
      events[0].id,
    ]);
    expect(row?.environment_id).toBe(env.id);
    expect(row?.occurred_at).toBeInstanceOf(Date);
  });

  it('records nothing for a write that failed', async () => {
    await createCustomer(env, { name: 'First', handle: 'unique-handle' });
    const before = await t.sql('select id from audit_event where environment_id = $1', [env.id]);

    const { userErrors } = await createCustomer(env, { name: 'Second', handle: 'unique-handle' });

    expect(userErrors[0].code).toBe('DUPLICATE');
    const after = await t.sql('select id from audit_event where environment_id = $1', [env.id]);
    expect(after).toHaveLength(before.length);
  });

  it('records an idempotent request once, however often it is replayed', async () => {
    const key = randomUUID();
    const { customer } = await createCustomer(env, { name: 'Once' }, { 'idempotency-key': key });
    await createCustomer(env, { name: 'Once' }, { 'idempotency-key': key });

    const events = await auditEvents(env, { objectId: customer.id });
    expect(events).toHaveLength(1);
    expect(events[0].operation).toBe('customerCreate');
  });

  it('shows each environment only its own events', async () => {
    const { customer } = await createCustomer(env, { name: 'Private' });
    expect(await auditEvents(other, { objectId: customer.id })).toEqual([]);
    const otherCustomer = (await createCustomer(other, { name: 'Theirs' })).customer;
    const all = await auditEvents(other, {});
    expect(all.map((event: { objectId: string }) => event.objectId)).toEqual([otherCustomer.id]);
  });

  it('records writes made outside a request with no token or operation', async () => {
    // given a write by the server itself (a job, in its environment's transaction), not by an API request
    const customer = await inEnvironment(t.orm.em, env.id, async (em) => {
      const created = em.create(CustomerSchema, {
        environmentId: env.id,
        name: 'By a job',
        companyName: null,
        handle: null,
        email: null,
        currency: null,
        paymentTerm: null,
        collectionMode: 'send_invoice',
        billingAddress: {} as never,
      });
      await em.flush();
      return created;
    });

    const [event] = await auditEvents(env, { objectId: customer.id });
    expect(event).toMatchObject({ action: 'create', tokenId: null, operation: null });
  });

  it('keeps the actor of the request in transactions a service opens itself', async () => {
    const id = await inRequestTransaction(
      createRequestContext(t.orm.em.fork(), env.id, { id: tokenId } as never),
      (ctx) =>
        ctx.em.transactional(async (em) => {
          const customer = em.create(CustomerSchema, {
            environmentId: env.id,
            name: 'In a transaction',
            companyName: null,
            handle: null,
            email: null,
            currency: null,
            paymentTerm: null,
            collectionMode: 'send_invoice',
            billingAddress: {} as never,
          });
          await em.flush();
          return customer.id;
        }),
    );

    const [event] = await auditEvents(env, { objectId: id });
    expect(event).toMatchObject({ action: 'create', tokenId });
  });

  it('pages with cursors and refuses more than 100 per page', async () => {
    const first = await t.graphql(AUDIT, { first: 2 }, { env });
    expect(first.body.data.auditEvents.edges).toHaveLength(2);
    const next = await t.graphql(
      AUDIT,
      { first: 2, after: first.body.data.auditEvents.pageInfo.endCursor },
      { env },
    );
    expect(next.body.data.auditEvents.edges[0].node.id).not.toBe(
      first.body.data.auditEvents.edges[1].node.id,
    );

    const big = await t.graphql(AUDIT, { first: 101 }, { env });
    expect(big.body.errors[0].extensions.code).toBe('INVALID_INPUT');
  });
});
