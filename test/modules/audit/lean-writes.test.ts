import { beforeAll, describe, expect, it } from 'vitest';
import { createRequestContext, inRequestTransaction } from '../../../src/context.ts';
import { newRow } from '../../../src/db/lean-write.ts';
import { inEnvironment } from '../../../src/db/tenant-transaction.ts';
import { DomainError } from '../../../src/errors.ts';
import { CustomerSchema } from '../../../src/modules/customer/customer.entity.ts';
import { writeChange } from '../../../src/modules/event/event.service.ts';
import { invoiceFixtures } from '../../invoice/fixtures.ts';
import { expectProblem, setupTestApp, type TestEnvironment } from '../../support/harness.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

type AuditRow = {
  token_id: string | null;
  operation: string | null;
  action: string;
  object_type: string;
  object_id: string;
  changed_fields: string[];
  occurred_at: Date;
};

const auditOf = (env: TestEnvironment, objectIds: string[]) =>
  t.sql<AuditRow>(
    `select token_id, operation, action, object_type, object_id, changed_fields, occurred_at
       from audit_event where environment_id = $1 and object_id = any($2) order by object_type, object_id, occurred_at`,
    [env.id, objectIds],
  );

const eventsOf = (env: TestEnvironment, objectId: string) =>
  t.sql<{ type: string; object_type: string; data: unknown }>(
    'select type, object_type, data from event where environment_id = $1 and object_id = $2 order by created_at',
    [env.id, objectId],
  );

/**
 * The lean write path (writeChange) of POST /invoices and PATCH /customers/{id}: the same rows, audit
 * trail and events as the unit of work wrote, in the request's transaction.
 */
describe('writes outside the unit of work', () => {
  let env: TestEnvironment;
  let tokenId: string;

  beforeAll(async () => {
    env = await t.createEnvironment('Lean');
    const [token] = await t.sql<{ id: string }>('select id from api_token where $1 = any(environment_ids)', [
      env.id,
    ]);
    tokenId = token?.id as string;
    await f.createTaxCode(env, 'VAT20', '20');
  });

  it('POST /invoices writes the draft, an audit event per row and its invoice.created event', async () => {
    const customerId = await f.createCustomer(env, { handle: 'lean-buyer', currency: 'EUR' });
    const body = await f.createInvoice(env, {
      customerId,
      items: [
        { title: 'One', quantity: 1, unitAmount: 1000, taxCode: 'VAT20' },
        { title: 'Two', quantity: 2, unitAmount: 250 },
      ],
    });

    // the rows read back are what the answer showed
    const read = await t.rest('GET', `/invoices/${body.id}`, { env });
    expect(read.body).toEqual(body);
    // one audit event per written row, by the request's token and operation, at one moment
    const itemIds = body.items.map((item: { id: string }) => item.id);
    const audit = await auditOf(env, [body.id, ...itemIds]);
    expect(audit.map((row) => [row.object_type, row.object_id, row.action, row.changed_fields])).toEqual([
      ['Invoice', body.id, 'create', []],
      ...[...itemIds].sort().map((id) => ['InvoiceItem', id, 'create', []]),
    ]);
    for (const row of audit) expect(row).toMatchObject({ token_id: tokenId, operation: 'POST /invoices' });
    expect(new Set(audit.map((row) => row.occurred_at.getTime())).size).toBe(1);
    // the event carries the invoice as the answer showed it
    const events = await eventsOf(env, body.id);
    expect(events).toEqual([{ type: 'invoice.created', object_type: 'invoice', data: body }]);
  });

  it('invoiceCreate answers the draft it wrote, with its lines and customer', async () => {
    const customerId = await f.createCustomer(env, { handle: 'lean-graphql', currency: 'EUR' });
    const response = await t.graphql(
      `mutation ($input: InvoiceCreateInput!) { invoiceCreate(input: $input) {
         invoice { id status totalInclVat customerId customer { handle } liveCustomer { id name } items { title amount taxAmount } }
         userErrors { code field } } }`,
      {
        input: {
          customerId,
          date: '2026-03-01',
          items: [{ title: 'G', quantity: 1, unitAmount: 100, taxCode: 'VAT20' }],
        },
      },
      { env },
    );
    expect(response.body.errors).toBeUndefined();
    const { invoice, userErrors } = response.body.data.invoiceCreate;
    expect(userErrors).toEqual([]);
    expect(invoice).toMatchObject({
      status: 'draft',
      totalInclVat: 120,
      customerId,
      customer: { handle: 'lean-graphql' },
      liveCustomer: { id: customerId, name: 'Ada Lovelace' },
      items: [{ title: 'G', amount: 100, taxAmount: 20 }],
    });
    expect((await eventsOf(env, invoice.id)).map((event) => event.type)).toEqual(['invoice.created']);
    expect((await auditOf(env, [invoice.id]))[0]).toMatchObject({
      operation: 'invoiceCreate',
      token_id: tokenId,
    });
  });

  it('PATCH /customers/{id} audits the same changed fields as a flush of the same change', async () => {
    const lean = await f.createCustomer(env, { handle: 'lean-patch', currency: 'EUR' });
    const flushed = await f.createCustomer(env, { handle: 'uow-patch', currency: 'EUR' });
    const address = { street1: 'Main 1', city: 'Oslo', country: 'NO' };

    const patched = await t.rest('PATCH', `/customers/${lean}`, {
      env,
      body: { name: 'Renamed', email: 'a@example.com', billingAddress: address, currency: 'EUR' },
    });
    expect(patched.status).toBe(200);
    await inEnvironment(t.orm.em, env.id, async (em) => {
      const customer = await em.findOneOrFail(CustomerSchema, { id: flushed });
      customer.name = 'Renamed';
      customer.email = 'a@example.com';
      customer.billingAddress = { ...customer.billingAddress, ...address };
      customer.updatedAt = new Date();
      await em.flush();
    });

    const [leanUpdate] = (await auditOf(env, [lean])).filter((row) => row.action === 'update');
    const [flushUpdate] = (await auditOf(env, [flushed])).filter((row) => row.action === 'update');
    expect(leanUpdate?.changed_fields).toEqual(['billingAddress', 'email', 'name', 'updatedAt']);
    expect(leanUpdate?.changed_fields).toEqual(flushUpdate?.changed_fields);
    expect(leanUpdate).toMatchObject({ object_type: 'Customer', operation: 'PATCH /customers/{customerId}' });
    // the event and the row hold what the answer showed
    const events = await eventsOf(env, lean);
    expect(events.at(-1)).toEqual({ type: 'customer.updated', object_type: 'customer', data: patched.body });
    expect((await t.rest('GET', `/customers/${lean}`, { env })).body).toEqual(patched.body);
  });

  it('a refused PATCH (a taken handle) answers 409 DUPLICATE and writes nothing', async () => {
    await f.createCustomer(env, { handle: 'taken' });
    const id = await f.createCustomer(env, { handle: 'mine' });
    const before = { audit: await auditOf(env, [id]), events: await eventsOf(env, id) };

    const response = await t.rest('PATCH', `/customers/${id}`, { env, body: { handle: 'taken', name: 'X' } });

    expectProblem(response, 409);
    expect(response.body).toMatchObject({ code: 'DUPLICATE' });
    expect(await auditOf(env, [id])).toEqual(before.audit);
    expect(await eventsOf(env, id)).toEqual(before.events);
    const [row] = await t.sql<{ handle: string }>('select handle from customer where id = $1', [id]);
    expect(row?.handle).toBe('mine');
  });

  it('a refused customerUpdate fails alone: the next mutation of the document is written', async () => {
    await f.createCustomer(env, { handle: 'taken-2' });
    const id = await f.createCustomer(env, { handle: 'mine-2' });
    const response = await t.graphql(
      `mutation ($id: UUID!) {
         first: customerUpdate(id: $id, input: { handle: "taken-2" }) { customer { id } userErrors { code field } }
         second: customerUpdate(id: $id, input: { name: "Second" }) { customer { name handle } userErrors { code } }
       }`,
      { id },
      { env },
    );
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data.first.userErrors).toEqual([{ code: 'DUPLICATE', field: ['input', 'handle'] }]);
    expect(response.body.data.second).toEqual({
      customer: { name: 'Second', handle: 'mine-2' },
      userErrors: [],
    });
    const updates = (await auditOf(env, [id])).filter((row) => row.action === 'update');
    expect(updates.map((row) => row.changed_fields)).toEqual([['name', 'updatedAt']]);
  });

  it('a change whose write fails leaves no row, audit event or event, and its transaction usable', async () => {
    await f.createCustomer(env, { handle: 'occupied' });
    const ctx = createRequestContext(t.orm.em.fork(), env.id, { id: tokenId } as never);
    const row = (handle: string) =>
      newRow(ctx.em, CustomerSchema, {
        environmentId: env.id,
        name: handle,
        handle,
        collectionMode: 'send_invoice',
        billingAddress: {} as never,
      });
    const refused = row('occupied');
    const accepted = row('free');
    const event = (id: string) => ({
      type: 'customer.created' as const,
      objectType: 'customer',
      objectId: id,
      data: {},
    });

    await inRequestTransaction(ctx, async ({ em }) => {
      const write = writeChange(
        em,
        env.id,
        { created: [{ entity: CustomerSchema, rows: [refused] }], events: [event(refused.id)] },
        { unique: () => DomainError.onField('DUPLICATE', ['handle'], 'taken') },
      );
      await expect(write).rejects.toMatchObject({ code: 'DUPLICATE' });
      await writeChange(em, env.id, {
        created: [{ entity: CustomerSchema, rows: [accepted] }],
        events: [event(accepted.id)],
      });
    });

    expect(await t.sql('select id from customer where id = $1', [refused.id])).toEqual([]);
    expect(await auditOf(env, [refused.id])).toEqual([]);
    expect(await eventsOf(env, refused.id)).toEqual([]);
    expect(await auditOf(env, [accepted.id])).toHaveLength(1);
    expect(await eventsOf(env, accepted.id)).toHaveLength(1);
  });
});
