import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { invoiceFixtures } from './fixtures.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

const INVOICE = `id status currency date dueDate memo updatedAt totalExclVat totalVat totalInclVat totalDue
  items { id title quantity unitAmount amount taxAmount tax { taxable taxCode taxRate } discount { percentage amount } }`;
const ERRORS = 'userErrors { field message code }';

const CREATE = `mutation ($input: InvoiceCreateInput!) { invoiceCreate(input: $input) { invoice { ${INVOICE} } ${ERRORS} } }`;
const UPDATE = `mutation ($id: UUID!, $input: InvoiceUpdateInput!) {
  invoiceUpdate(id: $id, input: $input) { invoice { ${INVOICE} } ${ERRORS} } }`;
const ITEM_ADD = `mutation ($invoiceId: UUID!, $input: InvoiceItemInput!) {
  invoiceItemAdd(invoiceId: $invoiceId, input: $input) { invoice { ${INVOICE} } invoiceItem { id title amount } ${ERRORS} } }`;
const ITEM_UPDATE = `mutation ($id: UUID!, $input: InvoiceItemUpdateInput!) {
  invoiceItemUpdate(id: $id, input: $input) { invoice { ${INVOICE} } invoiceItem { id title amount } ${ERRORS} } }`;
const ITEM_REMOVE = `mutation ($id: UUID!) { invoiceItemRemove(id: $id) { invoice { ${INVOICE} } ${ERRORS} } }`;
const DELETE = `mutation ($id: UUID!) { invoiceDelete(id: $id) { deletedInvoiceId ${ERRORS} } }`;
const BOOK = `mutation ($id: UUID!) { invoiceBook(id: $id) { invoice { id handle status } ${ERRORS} } }`;

describe('draft invoices through GraphQL', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment();
    customerId = await f.createCustomer(env, { paymentTerm: 'net10' });
    await f.createTaxCode(env, 'VAT20', '20');
    await f.createTaxCode(env, 'VAT10', '10');
  });

  async function createDraft(items: unknown[] = [{ quantity: 2, unitAmount: 1000, title: 'Widget' }]) {
    const data = await f.gql(env, CREATE, { input: { customerId, date: '2026-05-01', items } });
    expect(data.invoiceCreate.userErrors).toEqual([]);
    return data.invoiceCreate.invoice;
  }

  it('creates a draft with invoiceCreate', async () => {
    const invoice = await createDraft([
      { quantity: 2, unitAmount: 1000, title: 'Widget', taxCode: 'VAT20', discount: { percentage: 5 } },
    ]);

    expect(invoice).toMatchObject({
      status: 'draft',
      currency: 'EUR',
      date: '2026-05-01',
      dueDate: '2026-05-11',
      totalExclVat: 1900,
      totalVat: 380,
      totalInclVat: 2280,
      items: [{ amount: 1900, taxAmount: 380, tax: { taxable: true, taxCode: 'VAT20', taxRate: 20 } }],
    });
  });

  it('answers invoiceCreate with userErrors for an unknown customer or a missing currency', async () => {
    const cashless = await f.createCustomer(env, { name: 'Cashless', currency: null });

    const unknown = await f.gql(env, CREATE, { input: { customerId: randomUUID(), date: '2026-05-01' } });
    const noCurrency = await f.gql(env, CREATE, { input: { customerId: cashless, date: '2026-05-01' } });

    expect(unknown.invoiceCreate).toEqual({
      invoice: null,
      userErrors: [
        { field: ['input', 'customerId'], message: expect.any(String), code: 'INVALID_REFERENCE' },
      ],
    });
    expect(noCurrency.invoiceCreate.userErrors).toEqual([
      { field: ['input', 'currency'], message: expect.any(String), code: 'INVALID_REFERENCE' },
    ]);
  });

  it('updates the date, due date, memo and currency of a draft; absent fields stay', async () => {
    const draft = await createDraft();

    const first = await f.gql(env, UPDATE, {
      id: draft.id,
      input: { date: '2026-06-01', dueDate: '2026-06-15', memo: 'Net 14', currency: 'sek' },
    });
    const second = await f.gql(env, UPDATE, { id: draft.id, input: { memo: null } });

    expect(first.invoiceUpdate.invoice).toMatchObject({
      date: '2026-06-01',
      dueDate: '2026-06-15',
      memo: 'Net 14',
      currency: 'SEK',
      updatedAt: expect.any(String),
    });
    expect(second.invoiceUpdate.invoice).toMatchObject({ date: '2026-06-01', memo: null, currency: 'SEK' });
  });

  it('refuses an update that puts the due date before the date', async () => {
    const draft = await createDraft();
    await f.gql(env, UPDATE, { id: draft.id, input: { dueDate: '2026-05-20' } });

    const data = await f.gql(env, UPDATE, { id: draft.id, input: { date: '2026-05-21' } });

    expect(data.invoiceUpdate).toEqual({
      invoice: null,
      userErrors: [{ field: ['input', 'dueDate'], message: expect.any(String), code: 'INVALID_INPUT' }],
    });
  });

  it('adds, updates and removes items, keeping the totals the sums of the lines', async () => {
    const draft = await createDraft();

    const added = await f.gql(env, ITEM_ADD, {
      invoiceId: draft.id,
      input: { quantity: 1.5, unitAmount: 333, title: 'Hours', taxCode: 'VAT10' },
    });
    expect(added.invoiceItemAdd.invoiceItem).toMatchObject({ title: 'Hours', amount: 500 });
    expect(added.invoiceItemAdd.invoice).toMatchObject({
      totalExclVat: 2500,
      totalVat: 50,
      totalInclVat: 2550,
    });
    const itemId = added.invoiceItemAdd.invoiceItem.id;

    const updated = await f.gql(env, ITEM_UPDATE, {
      id: itemId,
      input: { quantity: 3, discount: { amount: 99 }, taxCode: 'VAT20' },
    });
    expect(updated.invoiceItemUpdate.invoiceItem).toMatchObject({ title: 'Hours', amount: 900 });
    expect(updated.invoiceItemUpdate.invoice).toMatchObject({ totalExclVat: 2900, totalVat: 180 });
    expect(updated.invoiceItemUpdate.invoice.items[1]).toMatchObject({
      quantity: 3,
      unitAmount: 333,
      discount: { percentage: 0, amount: 99 },
      tax: { taxable: true, taxCode: 'VAT20', taxRate: 20 },
    });

    const untaxed = await f.gql(env, ITEM_UPDATE, { id: itemId, input: { taxCode: null, discount: null } });
    expect(untaxed.invoiceItemUpdate.invoice).toMatchObject({ totalExclVat: 2999, totalVat: 0 });

    const removed = await f.gql(env, ITEM_REMOVE, { id: itemId });
    expect(removed.invoiceItemRemove.invoice).toMatchObject({ totalExclVat: 2000, totalInclVat: 2000 });
    expect(removed.invoiceItemRemove.invoice.items).toHaveLength(1);
    expect(await t.sql('select id from invoice_item where id = $1', [itemId])).toEqual([]);
  });

  it('answers the state after each of several mutations in one operation', async () => {
    const draft = await createDraft();

    const response = await t.graphql(
      `mutation ($id: UUID!) {
        a: invoiceItemAdd(invoiceId: $id, input: { quantity: 1, unitAmount: 1, title: "A" }) { invoice { items { title } } }
        b: invoiceItemAdd(invoiceId: $id, input: { quantity: 1, unitAmount: 2, title: "B" }) { invoice { items { title } totalExclVat } }
      }`,
      { id: draft.id },
      { env },
    );

    expect(response.body.data.a.invoice.items.map((item: any) => item.title)).toEqual(['Widget', 'A']);
    expect(response.body.data.b.invoice).toEqual({
      items: [{ title: 'Widget' }, { title: 'A' }, { title: 'B' }],
      totalExclVat: 2003,
    });
  });

  it('refuses item changes that break the rules, naming the field', async () => {
    const draft = await createDraft();
    const itemId = draft.items[0].id;

    const unknownTax = await f.gql(env, ITEM_ADD, {
      invoiceId: draft.id,
      input: { quantity: 1, unitAmount: 1, title: 'x', taxCode: 'NOPE' },
    });
    const noTitle = await f.gql(env, ITEM_ADD, {
      invoiceId: draft.id,
      input: { quantity: 1, unitAmount: 1 },
    });
    const tooMuchDiscount = await f.gql(env, ITEM_UPDATE, {
      id: itemId,
      input: { discount: { amount: 2001 } },
    });
    const badPeriod = await f.gql(env, ITEM_UPDATE, { id: itemId, input: { periodStart: '2026-05-02' } });
    const periodEnd = await f.gql(env, ITEM_UPDATE, { id: itemId, input: { periodEnd: '2026-05-01' } });

    expect(unknownTax.invoiceItemAdd.userErrors).toEqual([
      { field: ['input', 'taxCode'], message: expect.any(String), code: 'INVALID_REFERENCE' },
    ]);
    expect(noTitle.invoiceItemAdd.userErrors).toEqual([
      { field: ['input', 'title'], message: expect.any(String), code: 'INVALID_INPUT' },
    ]);
    expect(tooMuchDiscount.invoiceItemUpdate.userErrors).toEqual([
      { field: ['input', 'discount'], message: expect.any(String), code: 'INVALID_INPUT' },
    ]);
    expect(badPeriod.invoiceItemUpdate.userErrors).toEqual([]);
    expect(periodEnd.invoiceItemUpdate.userErrors).toEqual([
      { field: ['input', 'periodEnd'], message: expect.any(String), code: 'INVALID_INPUT' },
    ]);
    const [row] = await t.sql<{ amount: string }>('select amount from invoice_item where id = $1', [itemId]);
    expect(Number(row?.amount)).toBe(2000);
  });

  it('keeps an invoice at 1,000 lines at most, whether created or added to', async () => {
    // given a draft created with 999 lines
    const line = { quantity: 1, unitAmount: 1, title: 'Line' };
    const draft = await createDraft(Array.from({ length: 999 }, () => line));
    const lines = () => t.sql('select id from invoice_item where invoice_id = $1', [draft.id]);

    // when a line is added to reach 1,000, and then one more
    const thousandth = await f.gql(env, ITEM_ADD, { invoiceId: draft.id, input: line });
    const beyond = await f.gql(env, ITEM_ADD, { invoiceId: draft.id, input: line });

    // then the 1,000th is taken and the 1,001st refused, naming the input
    expect(thousandth.invoiceItemAdd.userErrors).toEqual([]);
    expect(thousandth.invoiceItemAdd.invoice.items).toHaveLength(1000);
    expect(beyond.invoiceItemAdd).toMatchObject({
      invoice: null,
      invoiceItem: null,
      userErrors: [
        {
          field: ['input'],
          message: 'an invoice has at most 1000 lines and this one has 1000; start another invoice',
          code: 'CONFLICT',
        },
      ],
    });
    expect(await lines()).toHaveLength(1000);

    // and invoiceCreate takes 1,000 lines but refuses 1,001 as invalid input at the items
    await createDraft(Array.from({ length: 1000 }, () => line));
    const response = await t.graphql(
      CREATE,
      { input: { customerId, date: '2026-05-01', items: Array.from({ length: 1001 }, () => line) } },
      { env },
    );
    expect(response.body.errors[0].extensions).toMatchObject({
      code: 'INVALID_INPUT',
      errors: [{ pointer: '/input/items', detail: 'an invoice has at most 1000 lines' }],
    });
  });

  it('rejects malformed input before it reaches the service', async () => {
    const draft = await createDraft();

    const response = await t.graphql(
      ITEM_ADD,
      {
        invoiceId: draft.id,
        input: { quantity: 1e-7, unitAmount: 1, title: 'x' },
      },
      { env },
    );

    expect(response.body.errors[0].extensions).toMatchObject({
      code: 'INVALID_INPUT',
      errors: [{ pointer: '/input/quantity', detail: expect.any(String) }],
    });
  });

  it('deletes a draft with its items', async () => {
    const draft = await createDraft();

    const data = await f.gql(env, DELETE, { id: draft.id });

    expect(data.invoiceDelete).toEqual({ deletedInvoiceId: draft.id, userErrors: [] });
    expect(await t.sql('select id from invoice where id = $1', [draft.id])).toEqual([]);
    expect(await t.sql('select id from invoice_item where invoice_id = $1', [draft.id])).toEqual([]);
  });

  it('records the deletion of the draft and of each of its items in the audit trail', async () => {
    // given a draft with two items
    const draft = await createDraft([
      { quantity: 1, unitAmount: 100, title: 'First' },
      { quantity: 2, unitAmount: 200, title: 'Second' },
    ]);
    const itemIds = draft.items.map((item: { id: string }) => item.id);
    expect(itemIds).toHaveLength(2);

    // when it is deleted
    const data = await f.gql(env, DELETE, { id: draft.id });
    expect(data.invoiceDelete.userErrors).toEqual([]);

    // then the trail holds a delete event, by that operation, for the invoice and for every item
    const AUDIT = `query ($objectId: UUID) {
      auditEvents(objectId: $objectId) { edges { node { action objectType objectId operation } } } }`;
    for (const [objectType, objectId] of [
      ['Invoice', draft.id],
      ...itemIds.map((id: string) => ['InvoiceItem', id]),
    ]) {
      const trail = await f.gql(env, AUDIT, { objectId });
      const actions = trail.auditEvents.edges.map((edge: { node: unknown }) => edge.node);
      expect(actions).toEqual([
        { action: 'create', objectType, objectId, operation: 'invoiceCreate' },
        { action: 'delete', objectType, objectId, operation: 'invoiceDelete' },
      ]);
    }
  });

  it('answers NOT_FOUND for unknown ids and ids of another environment', async () => {
    const other = await t.createEnvironment('Other');
    const draft = await createDraft();

    const foreign = await t.graphql(UPDATE, { id: draft.id, input: { memo: 'x' } }, { env: other });
    const unknownItem = await f.gql(env, ITEM_REMOVE, { id: randomUUID() });
    const unknownInvoice = await f.gql(env, BOOK, { id: randomUUID() });

    expect(foreign.body.data.invoiceUpdate.userErrors[0].code).toBe('NOT_FOUND');
    expect(unknownItem.invoiceItemRemove.userErrors[0].code).toBe('NOT_FOUND');
    expect(unknownInvoice.invoiceBook.userErrors[0].code).toBe('NOT_FOUND');
  });

  describe('once booked', () => {
    let booked: any;

    beforeAll(async () => {
      booked = await createDraft();
      const data = await f.gql(env, BOOK, { id: booked.id });
      expect(data.invoiceBook.invoice.status).toBe('booked');
    });

    it.each([
      ['invoiceUpdate', () => [UPDATE, { id: booked.id, input: { memo: 'changed' } }]],
      [
        'invoiceItemAdd',
        () => [ITEM_ADD, { invoiceId: booked.id, input: { quantity: 1, unitAmount: 1, title: 'x' } }],
      ],
      ['invoiceItemUpdate', () => [ITEM_UPDATE, { id: booked.items[0].id, input: { quantity: 5 } }]],
      ['invoiceItemRemove', () => [ITEM_REMOVE, { id: booked.items[0].id }]],
      ['invoiceDelete', () => [DELETE, { id: booked.id }]],
      ['invoiceBook', () => [BOOK, { id: booked.id }]],
    ] as const)('refuses %s with a CONFLICT and changes nothing', async (mutation, call) => {
      const before = await t.sql('select * from invoice where id = $1', [booked.id]);
      const items = await t.sql('select * from invoice_item where invoice_id = $1', [booked.id]);
      const [query, variables] = call();

      const data = await f.gql(env, query as string, variables as Record<string, unknown>);

      expect(data[mutation].userErrors).toEqual([
        { field: null, message: expect.any(String), code: 'CONFLICT' },
      ]);
      expect(await t.sql('select * from invoice where id = $1', [booked.id])).toEqual(before);
      expect(await t.sql('select * from invoice_item where invoice_id = $1', [booked.id])).toEqual(items);
    });
  });
});
