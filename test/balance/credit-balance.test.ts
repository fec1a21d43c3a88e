import { beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { balanceFixtures } from './balance-fixtures.ts';

const t = setupTestApp();
const f = balanceFixtures(t);

describe('credit balance', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment();
    await f.createTaxCode(env, 'VAT25', '25');
  });

  const newCustomer = () => f.createCustomer(env, { currency: 'EUR' });

  it('keeps an over-payment on the balance and applies it when the next invoice is booked', async () => {
    // given an invoice of 1000 paid 1300
    const customerId = await newCustomer();
    const first = await f.bookedInvoice(env, customerId, [1000]);
    const paid = await f.settle(env, first.id, 1300);
    expect(paid.invoice).toMatchObject({ settlementStatus: 'over_settled', totalDue: -300 });
    expect(await f.balanceRows(env, customerId)).toMatchObject({ balance: 300, movements: 300 });

    // when the next invoice (800) is booked
    const second = await f.bookedInvoice(env, customerId, [800]);

    // then the balance settles 300 of it and the excess moves off the first invoice
    expect(second).toMatchObject({ settlementStatus: 'under_settled', totalDue: 500 });
    expect(second.settlements).toEqual([
      { amount: 300, reference: 'customer balance', note: 'Credit balance applied' },
    ]);
    const source = (await t.rest('GET', `/invoices/${first.id}`, { env })).body;
    expect(source).toMatchObject({ settlementStatus: 'settled', totalDue: 0 });
    expect(source.settlements.at(-1)).toMatchObject({ amount: -300, reference: 'customer balance' });
    const { balances, transactions } = await f.balanceOf(env, customerId);
    expect(balances).toEqual([{ currency: 'EUR', amount: 0 }]);
    expect(transactions).toEqual([
      {
        type: 'overpayment',
        amount: 300,
        currency: 'EUR',
        invoice: { id: first.id },
        creditNote: null,
        refund: null,
      },
      {
        type: 'applied',
        amount: -300,
        currency: 'EUR',
        invoice: { id: second.id },
        creditNote: null,
        refund: null,
      },
    ]);
  });

  it('takes over-payments oldest first and leaves the rest on the balance', async () => {
    const customerId = await newCustomer();
    const older = await f.bookedInvoice(env, customerId, [100]);
    const newer = await f.bookedInvoice(env, customerId, [100]);
    await f.settle(env, older.id, 150);
    await f.settle(env, newer.id, 170);

    const next = await f.bookedInvoice(env, customerId, [60]);

    expect(next).toMatchObject({ settlementStatus: 'settled', totalDue: 0 });
    const [olderAfter] = await t.sql<{ settled_amount: string; settlement_status: string }>(
      'select settled_amount, settlement_status from invoice where id = $1',
      [older.id],
    );
    const [newerAfter] = await t.sql<{ settled_amount: string }>(
      'select settled_amount from invoice where id = $1',
      [newer.id],
    );
    expect(olderAfter).toEqual({ settled_amount: '100', settlement_status: 'settled' });
    expect(newerAfter?.settled_amount).toBe('160');
    expect(await f.balanceRows(env, customerId)).toMatchObject({ balance: 60, movements: 60 });
  });

  it('credits the balance from a credit note booked with outcome credit_balance', async () => {
    const customerId = await newCustomer();
    const invoice = await f.bookedInvoice(env, customerId, [1000], { taxCode: 'VAT25' });
    const draft = await f.creditNote(env, invoice.id, {
      lines: [{ itemId: invoice.items[0]?.id, amount: 200 }],
      reason: 'product_unsatisfactory',
      outcome: 'credit_balance',
    });
    expect(draft.userErrors).toEqual([]);
    expect(draft.creditNote).toMatchObject({ totalInclVat: 250, creditOutcome: 'credit_balance' });

    const booked = await f.book(env, draft.creditNote.id);

    expect(booked.invoice).toMatchObject({
      settlementStatus: 'settled',
      creditReason: 'product_unsatisfactory',
      settlements: [{ amount: 250, reference: 'customer balance', note: 'Credited to the customer balance' }],
    });
    // the credited invoice is left alone: its 1250 is still due
    const original = (await t.rest('GET', `/invoices/${invoice.id}`, { env })).body;
    expect(original).toMatchObject({ totalDue: 1250, settlementStatus: 'not_settled' });
    const { balances, transactions } = await f.balanceOf(env, customerId);
    expect(balances).toEqual([{ currency: 'EUR', amount: 250 }]);
    expect(transactions).toEqual([
      expect.objectContaining({ type: 'credit_note', amount: 250, creditNote: { id: draft.creditNote.id } }),
    ]);
  });

  it('puts on the balance what a settle_invoice credit note settles beyond the invoice', async () => {
    const customerId = await newCustomer();
    const invoice = await f.bookedInvoice(env, customerId, [1000]);
    await f.settle(env, invoice.id, 1000);
    const draft = await f.creditNote(env, invoice.id, {
      lines: [{ itemId: invoice.items[0]?.id, amount: 400 }],
    });

    await f.book(env, draft.creditNote.id);

    expect(await f.balanceRows(env, customerId)).toMatchObject({ balance: 400, movements: 400 });
    const original = (await t.rest('GET', `/invoices/${invoice.id}`, { env })).body;
    expect(original).toMatchObject({ totalDue: -400, settlementStatus: 'over_settled' });
  });

  describe('refunds', () => {
    it('refunds from the balance, moving the excess off the over-paid invoice', async () => {
      const customerId = await newCustomer();
      const invoice = await f.bookedInvoice(env, customerId, [500]);
      await f.settle(env, invoice.id, 800);

      const refunded = await f.refund(env, customerId, { currency: 'eur', amount: 200, reference: 'wire-7' });

      expect(refunded.userErrors).toEqual([]);
      expect(refunded.refund).toMatchObject({
        amount: 200,
        currency: 'EUR',
        reference: 'wire-7',
        creditNote: null,
      });
      expect(refunded.balance).toEqual({ currency: 'EUR', amount: 100 });
      const after = (await t.rest('GET', `/invoices/${invoice.id}`, { env })).body;
      expect(after).toMatchObject({ totalDue: -100, settlementStatus: 'over_settled' });
      const { transactions } = await f.balanceOf(env, customerId);
      expect(transactions.at(-1)).toMatchObject({ type: 'refund', amount: -200, refund: { amount: 200 } });
    });

    it('refuses a refund larger than the balance, and writes nothing', async () => {
      const customerId = await newCustomer();
      const invoice = await f.bookedInvoice(env, customerId, [500]);
      await f.settle(env, invoice.id, 600);

      const refused = await f.refund(env, customerId, { amount: 101 });
      const otherCurrency = await f.refund(env, customerId, { currency: 'USD', amount: 1 });

      expect(refused).toEqual({
        refund: null,
        balance: null,
        userErrors: [
          { field: ['input', 'amount'], message: expect.stringContaining('is 100'), code: 'CONFLICT' },
        ],
      });
      expect(otherCurrency.userErrors[0]?.code).toBe('CONFLICT');
      expect(await f.balanceRows(env, customerId)).toEqual({ balance: 100, movements: 100, refunds: 0 });
      const [row] = await t.sql<{ settled_amount: string }>(
        'select settled_amount from invoice where id = $1',
        [invoice.id],
      );
      expect(row?.settled_amount).toBe('600');
    });

    it('refuses an unknown customer, a zero amount and an unknown currency', async () => {
      const missing = await f.refund(env, '0190a000-0000-7000-8000-000000000000', {
        currency: 'EUR',
        amount: 1,
      });
      expect(missing.userErrors).toEqual([{ field: null, message: expect.any(String), code: 'NOT_FOUND' }]);
      const customerId = await newCustomer();
      const response = await t.graphql(
        `mutation ($customerId: UUID!, $input: RefundCreateInput!) {
          refundCreate(customerId: $customerId, input: $input) { refund { id } userErrors { field code } } }`,
        { customerId, input: { currency: 'XXQ', amount: 0 } },
        { env },
      );
      expect(response.body.data?.refundCreate ?? null).toBeNull();
      expect(JSON.stringify(response.body.errors)).toContain('amount');
      expect(await f.balanceRows(env, customerId)).toEqual({ balance: null, movements: 0, refunds: 0 });
    });

    it('records a refund for a credit note booked with outcome refund, up to what was paid', async () => {
      const customerId = await newCustomer();
      const invoice = await f.bookedInvoice(env, customerId, [1000]);
      await f.settle(env, invoice.id, 300);
      const tooMuch = await f.creditNote(env, invoice.id, {
        lines: [{ itemId: invoice.items[0]?.id, amount: 400 }],
        outcome: 'refund',
        reason: 'duplicate',
      });

      const refused = await f.book(env, tooMuch.creditNote.id);

      expect(refused).toEqual({
        invoice: null,
        userErrors: [{ field: null, message: expect.stringContaining('300'), code: 'CONFLICT' }],
      });
      const [draftRow] = await t.sql<{ status: string; handle: string | null }>(
        'select status, handle from invoice where id = $1',
        [tooMuch.creditNote.id],
      );
      expect(draftRow).toEqual({ status: 'draft', handle: null });
      expect((await f.balanceRows(env, customerId)).refunds).toBe(0);

      // when the draft is replaced by one within what was paid
      await f.gql(env, 'mutation ($id: UUID!) { invoiceDelete(id: $id) { deletedInvoiceId } }', {
        id: tooMuch.creditNote.id,
      });
      const fits = await f.creditNote(env, invoice.id, {
        lines: [{ itemId: invoice.items[0]?.id, amount: 300 }],
        outcome: 'refund',
      });
      const booked = await f.book(env, fits.creditNote.id);

      expect(booked.userErrors).toEqual([]);
      expect(booked.invoice).toMatchObject({ settlementStatus: 'settled', creditOutcome: 'refund' });
      const refunds = await t.sql('select amount, credit_note_id from refund where customer_id = $1', [
        customerId,
      ]);
      expect(refunds).toEqual([{ amount: '300', credit_note_id: fits.creditNote.id }]);
      expect(await f.balanceRows(env, customerId)).toMatchObject({ balance: 0, movements: 0 });
      const original = (await t.rest('GET', `/invoices/${invoice.id}`, { env })).body;
      expect(original).toMatchObject({ totalDue: 700 });
    });
  });

  it('never lets the balance go negative under 20 concurrent bookings', async () => {
    // given a balance of 1000 (an over-payment) and 20 drafts of 70 each
    const customerId = await newCustomer();
    const paid = await f.bookedInvoice(env, customerId, [100]);
    await f.settle(env, paid.id, 1100);
    const drafts = [];
    for (let index = 0; index < 20; index += 1) {
      drafts.push(
        await f.createInvoice(env, { customerId, items: [{ quantity: 1, unitAmount: 70, title: 'Seat' }] }),
      );
    }

    // when all are booked at once
    const results = await Promise.all(drafts.map((draft) => f.book(env, draft.id)));

    // then each booked, the first 1000 of 1400 came from the balance, and everything reconciles
    expect(results.every((result) => result.userErrors.length === 0)).toBe(true);
    const applied = results.reduce(
      (sum, result) => sum + (result.invoice.totalInclVat - result.invoice.totalDue),
      0,
    );
    expect(applied).toBe(1000);
    expect(await f.balanceRows(env, customerId)).toMatchObject({ balance: 0, movements: 0 });
    const [negative] = await t.sql<{ count: string }>(
      `select count(*) from balance_transaction b where customer_id = $1 and
         (select sum(amount) from balance_transaction x where x.customer_id = b.customer_id and x.id <= b.id) < 0`,
      [customerId],
    );
    expect(negative?.count).toBe('0');
    const [source] = await t.sql<{ settled_amount: string }>(
      'select settled_amount from invoice where id = $1',
      [paid.id],
    );
    expect(source?.settled_amount).toBe('100');
  });
});
