import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { invoiceFixtures } from './fixtures.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

const STATE =
  'id handle type status settlementStatus totalInclVat totalDue settlements { date amount reference note }';
const ERRORS = 'userErrors { field message code }';
const BOOK = `mutation ($id: UUID!) { invoiceBook(id: $id) { invoice { ${STATE} creditedInvoice { ${STATE} } } ${ERRORS} } }`;
const SETTLE = `mutation ($id: UUID!, $input: InvoiceSettleInput!) {
  invoiceSettle(id: $id, input: $input) { invoice { ${STATE} } settlement { id amount } ${ERRORS} } }`;
const CREDIT = `mutation ($invoiceId: UUID!, $input: CreditNoteCreateInput) {
  creditNoteCreate(invoiceId: $invoiceId, input: $input) {
    creditNote { ${STATE} date memo currency creditedInvoice { id } items { id creditedItemId title amount taxAmount } }
    ${ERRORS}
  }
}`;

describe('settlements and credit notes', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment();
    customerId = await f.createCustomer(env, { currency: 'DKK' });
    await f.createTaxCode(env, 'VAT25', '25');
  });

  /**
   * A booked invoice of the given lines (each line: unit amount, with 25 % tax). A test that leaves
   * an over-payment passes its own customer: the next booking for the customer would use it.
   */
  async function bookedInvoice(unitAmounts: number[] = [800], customer = customerId) {
    const invoice = await f.createInvoice(env, {
      customerId: customer,
      items: unitAmounts.map((unitAmount, index) => ({
        quantity: 1,
        unitAmount,
        title: `Line ${index + 1}`,
        taxCode: 'VAT25',
      })),
    });
    const data = await f.gql(env, BOOK, { id: invoice.id });
    expect(data.invoiceBook.userErrors).toEqual([]);
    return { ...data.invoiceBook.invoice, items: invoice.items as { id: string }[] };
  }

  const settle = async (id: string, amount: number, more: Record<string, unknown> = {}) =>
    (await f.gql(env, SETTLE, { id, input: { date: '2026-04-10', amount, ...more } })).invoiceSettle;

  describe('settlementStatus and totalDue', () => {
    it('walks not_settled, under_settled, settled and over_settled as payments arrive', async () => {
      const invoice = await bookedInvoice([800], await f.createCustomer(env, { currency: 'DKK' }));
      expect(invoice).toMatchObject({ totalInclVat: 1000, totalDue: 1000, settlementStatus: 'not_settled' });

      const partly = await settle(invoice.id, 400, { reference: 'bank-1', note: 'first instalment' });
      expect(partly.invoice).toMatchObject({ settlementStatus: 'under_settled', totalDue: 600 });
      expect(partly.settlement).toEqual({ id: expect.any(String), amount: 400 });

      const fully = await settle(invoice.id, 600);
      expect(fully.invoice).toMatchObject({ settlementStatus: 'settled', totalDue: 0 });

      const over = await settle(invoice.id, 1);
      expect(over.invoice).toMatchObject({ settlementStatus: 'over_settled', totalDue: -1 });
      expect(over.invoice.settlements).toEqual([
        { date: '2026-04-10', amount: 400, reference: 'bank-1', note: 'first instalment' },
        { date: '2026-04-10', amount: 600, reference: null, note: null },
        { date: '2026-04-10', amount: 1, reference: null, note: null },
      ]);

      const read = await t.rest('GET', `/invoices/${invoice.id}`, { env });
      expect(read.body).toMatchObject({ settlementStatus: 'over_settled', totalDue: -1, totalInclVat: 1000 });
      expect(read.body.settlements[0]).toEqual({
        date: '2026-04-10',
        amount: 400,
        reference: 'bank-1',
        note: 'first instalment',
      });
    });

    it('calls a booked invoice with a zero total settled', async () => {
      const invoice = await bookedInvoice([0]);
      expect(invoice).toMatchObject({ totalInclVat: 0, totalDue: 0, settlementStatus: 'settled' });
    });

    it('settles a negative total with money paid out', async () => {
      const invoice = await bookedInvoice([-800]);
      expect(invoice).toMatchObject({ totalInclVat: -1000, settlementStatus: 'not_settled' });

      const wrongWay = await settle(invoice.id, 100);
      const partly = await settle(invoice.id, -300);
      const fully = await settle(invoice.id, -700);

      expect(wrongWay.userErrors).toEqual([
        { field: ['input', 'amount'], message: expect.any(String), code: 'INVALID_INPUT' },
      ]);
      expect(partly.invoice).toMatchObject({ settlementStatus: 'under_settled', totalDue: -700 });
      expect(fully.invoice).toMatchObject({ settlementStatus: 'settled', totalDue: 0 });
    });

    it('refuses to settle a draft, and a settlement of 0', async () => {
      const draft = await f.createInvoice(env, {
        customerId,
        items: [{ quantity: 1, unitAmount: 5, title: 'x' }],
      });

      const onDraft = await settle(draft.id, 5);
      const zero = await t.graphql(
        SETTLE,
        { id: draft.id, input: { date: '2026-04-10', amount: 0 } },
        { env },
      );

      expect(onDraft.userErrors).toEqual([{ field: null, message: expect.any(String), code: 'CONFLICT' }]);
      expect(zero.body.errors[0].extensions.code).toBe('INVALID_INPUT');
      expect(await t.sql('select id from settlement where invoice_id = $1', [draft.id])).toEqual([]);
    });
  });

  describe('credit notes', () => {
    it('credits every line of a booked invoice; booking the credit note settles the invoice', async () => {
      // given a booked invoice
      const invoice = await bookedInvoice([800, 200]);

      // when it is credited in full and the credit note booked
      const created = (await f.gql(env, CREDIT, { invoiceId: invoice.id })).creditNoteCreate;
      const booked = (await f.gql(env, BOOK, { id: created.creditNote.id })).invoiceBook;

      // then the credit note copies the lines
      expect(created.userErrors).toEqual([]);
      expect(created.creditNote).toMatchObject({
        type: 'credit_note',
        status: 'draft',
        handle: null,
        currency: 'DKK',
        totalInclVat: 1250,
        creditedInvoice: { id: invoice.id },
        items: [
          { creditedItemId: invoice.items[0]?.id, title: 'Line 1', amount: 800, taxAmount: 200 },
          { creditedItemId: invoice.items[1]?.id, title: 'Line 2', amount: 200, taxAmount: 50 },
        ],
      });
      // and booking settles its total on the invoice under the credit note's number, and itself by it
      expect(booked.invoice).toMatchObject({
        handle: expect.stringMatching(/^CN-\d{6}$/),
        status: 'booked',
        settlementStatus: 'settled',
        totalDue: 0,
        settlements: [{ amount: 1250, reference: invoice.handle }],
      });
      expect(booked.invoice.creditedInvoice).toMatchObject({
        settlementStatus: 'settled',
        totalDue: 0,
        settlements: [{ amount: 1250, reference: booked.invoice.handle, note: 'Credit note' }],
      });
      const read = await t.rest('GET', `/invoices/${booked.invoice.id}`, { env });
      expect(read.body).toMatchObject({ type: 'credit_note', handle: booked.invoice.handle, totalDue: 0 });
    });

    it('credits some lines, then the rest, and never more than is left (409)', async () => {
      const invoice = await bookedInvoice([100, 200, 300]);
      const [first, second, third] = invoice.items.map((item: { id: string }) => item.id);

      const some = (await f.gql(env, CREDIT, { invoiceId: invoice.id, input: { itemIds: [second] } }))
        .creditNoteCreate;
      const again = (await f.gql(env, CREDIT, { invoiceId: invoice.id, input: { itemIds: [third, second] } }))
        .creditNoteCreate;
      const rest = (
        await f.gql(env, CREDIT, { invoiceId: invoice.id, input: { date: '2026-05-01', memo: 'Returned' } })
      ).creditNoteCreate;
      const nothingLeft = (await f.gql(env, CREDIT, { invoiceId: invoice.id })).creditNoteCreate;

      expect(some.creditNote.items.map((item: any) => item.creditedItemId)).toEqual([second]);
      expect(some.creditNote.totalInclVat).toBe(250);
      expect(again).toEqual({
        creditNote: null,
        userErrors: [{ field: ['input', 'itemIds', '1'], message: expect.any(String), code: 'CONFLICT' }],
      });
      expect(rest.creditNote).toMatchObject({ date: '2026-05-01', memo: 'Returned', totalInclVat: 500 });
      expect(rest.creditNote.items.map((item: any) => item.creditedItemId)).toEqual([first, third]);
      expect(nothingLeft.userErrors).toEqual([
        { field: null, message: expect.any(String), code: 'CONFLICT' },
      ]);
    });

    it('frees the lines of a deleted draft credit note', async () => {
      const invoice = await bookedInvoice([100]);
      const draft = (await f.gql(env, CREDIT, { invoiceId: invoice.id })).creditNoteCreate.creditNote;

      await f.gql(env, 'mutation ($id: UUID!) { invoiceDelete(id: $id) { deletedInvoiceId } }', {
        id: draft.id,
      });
      const again = (await f.gql(env, CREDIT, { invoiceId: invoice.id })).creditNoteCreate;

      expect(again.userErrors).toEqual([]);
      expect(again.creditNote.totalInclVat).toBe(125);
    });

    it('lets two concurrent requests credit a line only once', async () => {
      const invoice = await bookedInvoice([100, 100]);

      const results = await Promise.all([
        f.gql(env, CREDIT, { invoiceId: invoice.id }),
        f.gql(env, CREDIT, { invoiceId: invoice.id }),
      ]);

      const codes = results.map((data) => data.creditNoteCreate.userErrors[0]?.code ?? 'OK').sort();
      expect(codes).toEqual(['CONFLICT', 'OK']);
      const credits = await t.sql(
        'select credited_item_id from invoice_item where credited_item_id = any($1::uuid[])',
        [invoice.items.map((item: { id: string }) => item.id)],
      );
      expect(credits).toHaveLength(2);
    });

    it('over-settles an invoice paid in full and then credited', async () => {
      const invoice = await bookedInvoice([800], await f.createCustomer(env, { currency: 'DKK' }));
      await settle(invoice.id, 1000);
      const note = (await f.gql(env, CREDIT, { invoiceId: invoice.id })).creditNoteCreate.creditNote;

      const booked = (await f.gql(env, BOOK, { id: note.id })).invoiceBook;

      expect(booked.invoice.creditedInvoice).toMatchObject({
        settlementStatus: 'over_settled',
        totalDue: -1000,
      });
    });

    it('refuses to credit a draft, a credit note, or lines the invoice does not have', async () => {
      const draft = await f.createInvoice(env, {
        customerId,
        items: [{ quantity: 1, unitAmount: 5, title: 'x' }],
      });
      const invoice = await bookedInvoice([100]);
      const note = (await f.gql(env, CREDIT, { invoiceId: invoice.id })).creditNoteCreate.creditNote;
      await f.gql(env, BOOK, { id: note.id });

      const ofDraft = (await f.gql(env, CREDIT, { invoiceId: draft.id })).creditNoteCreate;
      const ofNote = (await f.gql(env, CREDIT, { invoiceId: note.id })).creditNoteCreate;
      const foreignLine = (
        await f.gql(env, CREDIT, { invoiceId: invoice.id, input: { itemIds: [draft.items[0].id] } })
      ).creditNoteCreate;
      const unknown = (await f.gql(env, CREDIT, { invoiceId: randomUUID() })).creditNoteCreate;

      expect(ofDraft.userErrors[0].code).toBe('CONFLICT');
      expect(ofNote.userErrors[0].code).toBe('CONFLICT');
      expect(foreignLine.userErrors).toEqual([
        { field: ['input', 'itemIds', '0'], message: expect.any(String), code: 'INVALID_REFERENCE' },
      ]);
      expect(unknown.userErrors[0].code).toBe('NOT_FOUND');
    });

    it('keeps the lines and currency of a draft credit note those of the invoice; lines can be removed', async () => {
      const invoice = await bookedInvoice([100, 200]);
      const note = (await f.gql(env, CREDIT, { invoiceId: invoice.id })).creditNoteCreate.creditNote;

      const add = await f.gql(
        env,
        `mutation ($id: UUID!) { invoiceItemAdd(invoiceId: $id, input: { quantity: 1, unitAmount: 1, title: "x" }) { ${ERRORS} } }`,
        { id: note.id },
      );
      const change = await f.gql(
        env,
        `mutation ($id: UUID!) { invoiceItemUpdate(id: $id, input: { quantity: 2 }) { ${ERRORS} } }`,
        { id: note.items[0].id },
      );
      const currency = await f.gql(
        env,
        `mutation ($id: UUID!) { invoiceUpdate(id: $id, input: { currency: "EUR" }) { ${ERRORS} } }`,
        { id: note.id },
      );
      const remove = await f.gql(
        env,
        `mutation ($id: UUID!) { invoiceItemRemove(id: $id) { invoice { totalInclVat } ${ERRORS} } }`,
        { id: note.items[0].id },
      );

      expect(add.invoiceItemAdd.userErrors[0].code).toBe('CONFLICT');
      expect(change.invoiceItemUpdate.userErrors[0].code).toBe('CONFLICT');
      expect(currency.invoiceUpdate.userErrors).toEqual([
        { field: ['input', 'currency'], message: expect.any(String), code: 'CONFLICT' },
      ]);
      expect(remove.invoiceItemRemove).toEqual({ invoice: { totalInclVat: 250 }, userErrors: [] });
    });
  });
});
