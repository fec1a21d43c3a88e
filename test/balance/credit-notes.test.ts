import { beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { balanceFixtures } from './balance-fixtures.ts';

const t = setupTestApp();
const f = balanceFixtures(t);

describe('credit notes by amount, by quantity and with free lines', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment();
    await f.createTaxCode(env, 'VAT25', '25');
    customerId = await f.createCustomer(env, { currency: 'EUR' });
  });

  const creditNoteCount = async (invoiceId: string) =>
    Number(
      (
        await t.sql<{ count: string }>('select count(*) from invoice where credited_invoice_id = $1', [
          invoiceId,
        ])
      )[0]?.count,
    );

  it('credits 2 of 5 seats, then €20 of what is left, then refuses more than is left (409)', async () => {
    // given 5 seats at 1000 each, taxed at 25 %
    const invoice = await f.bookedInvoice(env, customerId, [1000], { taxCode: 'VAT25', quantity: 5 });
    const itemId = invoice.items[0]?.id;

    const seats = await f.creditNote(env, invoice.id, {
      lines: [{ itemId, quantity: 2 }],
      reason: 'order_change',
    });
    const goodwill = await f.creditNote(env, invoice.id, { lines: [{ itemId, amount: 2000 }] });
    const tooMuch = await f.creditNote(env, invoice.id, { lines: [{ itemId, amount: 1001 }] });
    const tooManySeats = await f.creditNote(env, invoice.id, { lines: [{ itemId, quantity: 6 }] });

    expect(seats.creditNote).toMatchObject({ totalInclVat: 2500, creditReason: 'order_change' });
    expect(seats.creditNote.items).toEqual([
      { creditedItemId: itemId, title: 'Line 1', quantity: 2, amount: 2000, taxAmount: 500 },
    ]);
    expect(goodwill.creditNote.items).toEqual([
      { creditedItemId: itemId, title: 'Line 1', quantity: 1, amount: 2000, taxAmount: 500 },
    ]);
    expect(tooMuch).toEqual({
      creditNote: null,
      userErrors: [
        {
          field: ['input', 'lines', '0', 'amount'],
          message: "credits 1001, but only 1000 of this line's 5000 is left to credit",
          code: 'CONFLICT',
        },
      ],
    });
    expect(tooManySeats.userErrors).toEqual([
      {
        field: ['input', 'lines', '0', 'quantity'],
        message: expect.stringContaining('quantity'),
        code: 'CONFLICT',
      },
    ]);
    expect(await creditNoteCount(invoice.id)).toBe(2);

    // and whole-line crediting takes exactly what is left
    const rest = await f.creditNote(env, invoice.id, { itemIds: [itemId] });
    expect(rest.creditNote.items).toEqual([
      { creditedItemId: itemId, title: 'Line 1', quantity: 1, amount: 1000, taxAmount: 250 },
    ]);
    const none = await f.creditNote(env, invoice.id);
    expect(none.userErrors).toEqual([{ field: null, message: expect.any(String), code: 'CONFLICT' }]);
  });

  it('counts booked credit notes as well as drafts, and frees what a deleted draft took', async () => {
    const invoice = await f.bookedInvoice(env, customerId, [500]);
    const itemId = invoice.items[0]?.id;
    const first = await f.creditNote(env, invoice.id, { lines: [{ itemId, amount: 300 }] });
    await f.book(env, first.creditNote.id);
    const draft = await f.creditNote(env, invoice.id, { lines: [{ itemId, amount: 200 }] });

    const refused = await f.creditNote(env, invoice.id, { lines: [{ itemId, amount: 1 }] });
    await f.gql(env, 'mutation ($id: UUID!) { invoiceDelete(id: $id) { deletedInvoiceId } }', {
      id: draft.creditNote.id,
    });
    const again = await f.creditNote(env, invoice.id, { lines: [{ itemId, amount: 200 }] });

    expect(refused.userErrors[0]?.code).toBe('CONFLICT');
    expect(again.userErrors).toEqual([]);
  });

  it('adds free lines, taxed by their code, within what is left of the invoice', async () => {
    const invoice = await f.bookedInvoice(env, customerId, [1000]);

    const free = await f.creditNote(env, invoice.id, {
      freeLines: [{ title: 'Goodwill', amount: 200, taxCode: 'VAT25' }],
      reason: 'other',
    });
    const beyond = await f.creditNote(env, invoice.id, { freeLines: [{ title: 'Too much', amount: 751 }] });
    const unknownCode = await f.creditNote(env, invoice.id, {
      freeLines: [{ title: 'Goodwill', amount: 1, taxCode: 'NOPE' }],
    });

    expect(free.creditNote).toMatchObject({ totalInclVat: 250 });
    expect(free.creditNote.items).toEqual([
      { creditedItemId: null, title: 'Goodwill', quantity: 1, amount: 200, taxAmount: 50 },
    ]);
    expect(beyond.userErrors).toEqual([
      { field: ['input', 'freeLines'], message: expect.stringContaining('750'), code: 'CONFLICT' },
    ]);
    expect(unknownCode.userErrors).toEqual([
      {
        field: ['input', 'freeLines', '0', 'taxCode'],
        message: expect.any(String),
        code: 'INVALID_REFERENCE',
      },
    ]);
    expect(await creditNoteCount(invoice.id)).toBe(1);
  });

  it('refuses lines of another invoice, both quantity and amount, and itemIds with lines', async () => {
    const invoice = await f.bookedInvoice(env, customerId, [100]);
    const other = await f.bookedInvoice(env, customerId, [100]);
    const itemId = invoice.items[0]?.id;

    const foreignLine = await f.creditNote(env, invoice.id, {
      lines: [{ itemId: other.items[0]?.id, amount: 1 }],
    });
    const both = await t.graphql(
      `mutation ($invoiceId: UUID!, $input: CreditNoteCreateInput) {
        creditNoteCreate(invoiceId: $invoiceId, input: $input) { creditNote { id } userErrors { field code } } }`,
      { invoiceId: invoice.id, input: { lines: [{ itemId, amount: 1, quantity: 1 }] } },
      { env },
    );
    const mixed = await t.graphql(
      `mutation ($invoiceId: UUID!, $input: CreditNoteCreateInput) {
        creditNoteCreate(invoiceId: $invoiceId, input: $input) { creditNote { id } userErrors { field code } } }`,
      { invoiceId: invoice.id, input: { itemIds: [itemId], lines: [{ itemId, amount: 1 }] } },
      { env },
    );

    expect(foreignLine.userErrors).toEqual([
      { field: ['input', 'lines', '0', 'itemId'], message: expect.any(String), code: 'INVALID_REFERENCE' },
    ]);
    for (const response of [both, mixed]) {
      expect(response.body.data?.creditNoteCreate ?? null).toBeNull();
      expect(response.body.errors?.[0]?.extensions?.code).toBeDefined();
    }
    expect(await creditNoteCount(invoice.id)).toBe(0);
  });

  it('credits a negative line only whole, and only by settling the invoice', async () => {
    // given an invoice of 1000 with a discount line of −200
    const invoice = await f.bookedInvoice(env, customerId, [1000, -200]);
    const discountLine = invoice.items[1]?.id;

    const part = await f.creditNote(env, invoice.id, { lines: [{ itemId: discountLine, amount: 100 }] });
    const whole = await f.creditNote(env, invoice.id, { itemIds: [discountLine], outcome: 'credit_balance' });
    const refused = await f.book(env, whole.creditNote.id);

    expect(part.userErrors).toEqual([
      {
        field: ['input', 'lines', '0', 'amount'],
        message: expect.stringContaining('positive'),
        code: 'CONFLICT',
      },
    ]);
    expect(whole.creditNote).toMatchObject({ totalInclVat: -200 });
    expect(refused.userErrors).toEqual([
      { field: null, message: expect.stringContaining('negative'), code: 'CONFLICT' },
    ]);
    const rows = await t.sql('select status from invoice where credited_invoice_id = $1', [invoice.id]);
    expect(rows).toEqual([{ status: 'draft' }]);
    expect((await f.balanceRows(env, customerId)).movements).toBe(0);
  });

  it('shows a credit note through REST as the contract has it', async () => {
    const invoice = await f.bookedInvoice(env, customerId, [400]);
    const note = await f.creditNote(env, invoice.id, {
      lines: [{ itemId: invoice.items[0]?.id, amount: 100 }],
      outcome: 'credit_balance',
    });
    await f.book(env, note.creditNote.id);

    const read = await t.rest('GET', `/invoices/${note.creditNote.id}`, { env });

    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ type: 'credit_note', totalInclVat: 100, totalDue: 0 });
    expect(read.body).not.toHaveProperty('creditOutcome');
  });
});
