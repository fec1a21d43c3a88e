import type { MikroORM } from '@mikro-orm/postgresql';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { openLoggedOrm, type StatementLog } from '../support/statements.ts';
import { invoiceFixtures } from './fixtures.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

const BOOK = 'mutation ($id: UUID!) { invoiceBook(id: $id) { userErrors { message } } }';
const SETTLE = `mutation ($id: UUID!, $input: InvoiceSettleInput!) {
  invoiceSettle(id: $id, input: $input) { userErrors { message } } }`;

describe("an invoice's REST answer: built once on creation, read in one statement", () => {
  let env: TestEnvironment;
  let customerId: string;
  let orm: MikroORM;
  let log: StatementLog;

  const items = [
    { quantity: 3, unitAmount: 1250, title: 'Seats', taxCode: 'VAT25' },
    { quantity: 1.5, unitAmount: 9999.5, title: 'Consulting hours', description: 'March' },
    { quantity: 1000, unitAmount: 0.25, title: 'API calls', discount: { percentage: 10, amount: 0 } },
  ];

  /** GET /invoices/{id} on an app whose statements `log` records: the status, the body and the work statements. */
  async function read(id: string, as: TestEnvironment = env) {
    const app = createApp({ orm, logger: pino({ level: 'silent' }) });
    log.statements = [];
    const response = await app.fetch(`http://test/invoices/${id}`, { headers: as.headers });
    return { status: response.status, body: await response.json(), work: log.work() };
  }

  beforeAll(async () => {
    env = await t.createEnvironment();
    const billingAddress = { city: 'London', country: 'GB' };
    customerId = await f.createCustomer(env, { name: 'Ada Lovelace', handle: 'ada', billingAddress });
    await f.createTaxCode(env, 'VAT25', '25');
    ({ orm, log } = await openLoggedOrm(t.databaseUrl));
  });

  afterAll(async () => {
    await orm?.close();
  });

  it('answers POST /invoices with what its invoice.created event carries, lines in id order', async () => {
    const created = await f.createInvoice(env, { customerId, memo: 'March', items });

    const [event] = await t.sql<{ data: unknown }>(
      `select data from event where object_id = $1 and type = 'invoice.created'`,
      [created.id],
    );
    expect(event?.data).toEqual(created);
    const ids = created.items.map((item: { id: string }) => item.id);
    expect(ids).toEqual([...ids].sort());
    expect(created.items.map((item: { title: string }) => item.title)).toEqual(
      items.map((item) => item.title),
    );
    const [row] = await t.sql<{ n: number }>(
      'select count(*)::int as n from invoice_item where invoice_id = $1 and id = any($2::uuid[])',
      [created.id, ids],
    );
    expect(row?.n).toBe(3);

    await read(created.id); // the first request also sees the ORM's connection check
    const answered = await read(created.id);
    expect(answered.status).toBe(200);
    expect(answered.body).toEqual(created);
    expect(answered.work).toHaveLength(1);
  });

  it('reads a draft with its customer as now, a booked invoice as booked with its settlements, one statement each', async () => {
    const draft = await f.createInvoice(env, { customerId, memo: 'draft', items });
    const booked = await f.createInvoice(env, { customerId, memo: 'booked', items });
    await f.gql(env, BOOK, { id: booked.id });
    await f.gql(env, SETTLE, {
      id: booked.id,
      input: { date: '2026-03-05', amount: 100, reference: 'PAY-1' },
    });
    await f.gql(env, SETTLE, {
      id: booked.id,
      input: { date: '2026-03-06', amount: 200, note: 'rest later' },
    });
    const renamed = await t.rest('PATCH', `/customers/${customerId}`, { env, body: { name: 'Ada King' } });
    expect(renamed.status).toBe(200);

    const readDraft = await read(draft.id);
    expect(readDraft.status).toBe(200);
    expect(readDraft.body).toEqual({ ...draft, customer: { ...draft.customer, name: 'Ada King' } });
    expect(readDraft.work).toHaveLength(1);

    const readBooked = await read(booked.id);
    expect(readBooked.status).toBe(200);
    expect(readBooked.work).toHaveLength(1);
    const [stored] = await t.sql<{ handle: string }>('select handle from invoice where id = $1', [booked.id]);
    expect(readBooked.body).toEqual({
      ...booked,
      handle: stored?.handle,
      status: 'booked',
      settlementStatus: 'under_settled',
      updatedAt: expect.any(String),
      customer: { ...booked.customer, name: 'Ada Lovelace' },
      settlements: [
        { date: '2026-03-05', amount: 100, reference: 'PAY-1', note: null },
        { date: '2026-03-06', amount: 200, reference: null, note: 'rest later' },
      ],
      totalDue: booked.totalInclVat - 300,
    });
  });

  it("answers 404 for an unknown invoice and another environment's, in one statement", async () => {
    const created = await f.createInvoice(env, { customerId, items: [] });
    const other = await t.createEnvironment();

    for (const [id, as] of [
      ['0190a000-0000-7000-8000-000000000000', env],
      [created.id, other],
    ] as const) {
      const answered = await read(id, as);
      expect(answered.status).toBe(404);
      expect(answered.body.code).toBe('NOT_FOUND');
      expect(answered.body.detail).toContain(id);
      expect(answered.work).toHaveLength(1);
    }
  });
});
