import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { daysBetween, today } from '../../src/dates/calendar.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { invoiceFixtures } from './fixtures.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

const STATE = `id handle status settlementStatus totalInclVat totalDue voidedAt uncollectibleAt
  collectionStatus overdue daysOverdue settlements { id amount reference note reversesSettlementId }`;
const ERRORS = 'userErrors { field message code }';
const BOOK = `mutation ($id: UUID!) { invoiceBook(id: $id) { invoice { ${STATE} } ${ERRORS} } }`;
const VOID = `mutation ($id: UUID!) { invoiceVoid(id: $id) { invoice { ${STATE} } ${ERRORS} } }`;
const UNCOLLECTIBLE = `mutation ($id: UUID!) {
  invoiceMarkUncollectible(id: $id) { invoice { ${STATE} } ${ERRORS} } }`;
const SETTLE = `mutation ($id: UUID!, $input: InvoiceSettleInput!) {
  invoiceSettle(id: $id, input: $input) { invoice { ${STATE} } settlement { id } ${ERRORS} } }`;
const REVERSE = `mutation ($settlementId: UUID!, $reason: String) {
  settlementReverse(settlementId: $settlementId, reason: $reason) {
    invoice { ${STATE} } reversal { id amount date reference note reversesSettlementId } ${ERRORS} } }`;
const CREDIT = `mutation ($invoiceId: UUID!) {
  creditNoteCreate(invoiceId: $invoiceId) { creditNote { id } ${ERRORS} } }`;
const LIST = `query ($filter: InvoiceFilter) { invoices(filter: $filter, first: 100) { edges { node { id } } } }`;

describe('void, uncollectible, reversal and overdue', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment();
    customerId = await f.createCustomer(env, { currency: 'EUR' });
    await f.createTaxCode(env, 'VAT25', '25');
  });

  const draft = async (dueDate = '2026-03-15') =>
    (await f.createInvoice(env, {
      customerId,
      dueDate,
      items: [{ quantity: 1, unitAmount: 800, title: 'Service', taxCode: 'VAT25' }],
    })) as { id: string };

  async function booked(dueDate?: string) {
    const { id } = await draft(dueDate);
    const data = await f.gql(env, BOOK, { id });
    expect(data.invoiceBook.userErrors).toEqual([]);
    return data.invoiceBook.invoice;
  }

  const run = async (query: string, variables: Record<string, unknown>) => {
    const data = await f.gql(env, query, variables);
    return Object.values(data)[0] as any;
  };
  const settle = (id: string, amount = 1000) =>
    run(SETTLE, { id, input: { date: '2026-03-10', amount, reference: 'bank-1' } });
  const row = async (id: string) => {
    const [invoice] = await t.sql<any>(
      'select status, handle, voided_at, uncollectible_at, settled_amount from invoice where id = $1',
      [id],
    );
    return invoice;
  };
  const settlementRows = async (invoiceId: string) =>
    t.sql<{ amount: string; reverses_settlement_id: string | null }>(
      'select amount, reverses_settlement_id from settlement where invoice_id = $1 order by id',
      [invoiceId],
    );
  const listed = async (filter: Record<string, unknown>) =>
    (await f.gql(env, LIST, { filter })).invoices.edges.map((edge: any) => edge.node.id);
  const conflict = (message: RegExp) => [
    { field: null, code: 'CONFLICT', message: expect.stringMatching(message) },
  ];

  describe('invoiceVoid', () => {
    it('keeps the number, owes nothing, and the next booking takes the next number', async () => {
      const first = await booked();
      const voided = await run(VOID, { id: first.id });
      expect(voided.userErrors).toEqual([]);
      expect(voided.invoice).toMatchObject({
        handle: first.handle,
        status: 'booked',
        collectionStatus: 'void',
        voidedAt: expect.any(String),
        totalInclVat: 1000,
        totalDue: 0,
        overdue: false,
        daysOverdue: 0,
      });
      expect(await row(first.id)).toMatchObject({
        status: 'booked',
        handle: first.handle,
        voided_at: expect.any(Date),
      });

      const next = await booked();
      const number = (handle: string) => Number(handle.replace(/\D/g, ''));
      expect(number(next.handle)).toBe(number(first.handle) + 1);

      const rest = await t.rest('GET', `/invoices/${first.id}`, { env });
      expect(rest.status).toBe(200);
      expect(rest.body).toMatchObject({
        handle: first.handle,
        status: 'booked',
        totalDue: 0,
        totalInclVat: 1000,
      });
      expect(rest.body).not.toHaveProperty('voidedAt');

      const audit = await f.gql(
        env,
        'query ($id: UUID!) { auditEvents(objectId: $id) { edges { node { action operation changedFields } } } }',
        { id: first.id },
      );
      expect(audit.auditEvents.edges.map((edge: any) => edge.node)).toContainEqual({
        action: 'update',
        operation: 'invoiceVoid',
        changedFields: expect.arrayContaining(['voidedAt']),
      });
    });

    it('refuses a draft, a credit note, an invoice already void, and an unknown id', async () => {
      const { id } = await draft();
      expect((await run(VOID, { id })).userErrors).toEqual(conflict(/draft.*delete/));
      expect((await row(id)).voided_at).toBeNull();

      const credited = await booked();
      const creditNote = await run(CREDIT, { invoiceId: credited.id });
      await run(BOOK, { id: creditNote.creditNote.id });
      expect((await run(VOID, { id: creditNote.creditNote.id })).userErrors).toEqual(conflict(/credit note/));

      const invoice = await booked();
      await run(VOID, { id: invoice.id });
      const before = await row(invoice.id);
      expect((await run(VOID, { id: invoice.id })).userErrors).toEqual(conflict(/already void/));
      expect(await row(invoice.id)).toEqual(before);

      const missing = await run(VOID, { id: randomUUID() });
      expect(missing.userErrors).toEqual([{ field: null, code: 'NOT_FOUND', message: expect.any(String) }]);
    });

    it('refuses an invoice with settlements until they are reversed', async () => {
      const invoice = await booked();
      const { settlement } = await settle(invoice.id, 400);
      expect((await run(VOID, { id: invoice.id })).userErrors).toEqual(conflict(/reverse them/));
      expect((await row(invoice.id)).voided_at).toBeNull();

      expect((await run(REVERSE, { settlementId: settlement.id })).userErrors).toEqual([]);
      const voided = await run(VOID, { id: invoice.id });
      expect(voided.userErrors).toEqual([]);
      expect(voided.invoice).toMatchObject({ collectionStatus: 'void', totalDue: 0 });
    });

    it('refuses an invoice a credit note credits, drafted or booked', async () => {
      const invoice = await booked();
      const creditNote = (await run(CREDIT, { invoiceId: invoice.id })).creditNote;
      expect((await run(VOID, { id: invoice.id })).userErrors).toEqual(conflict(/draft credit note.*delete/));

      await run(BOOK, { id: creditNote.id });
      expect((await run(VOID, { id: invoice.id })).userErrors).toEqual(conflict(/credit note CN-.*issued/));
      expect((await row(invoice.id)).voided_at).toBeNull();
      const [applied] = (
        await f.gql(env, `query ($id: UUID!) { invoice(id: $id) { ${STATE} } }`, { id: invoice.id })
      ).invoice.settlements;
      expect((await run(REVERSE, { settlementId: applied.id })).userErrors).toEqual(
        conflict(/credit note CN-/),
      );
      expect(await settlementRows(invoice.id)).toHaveLength(1);
    });

    it('takes no settlement and no credit note once void', async () => {
      const invoice = await booked();
      await run(VOID, { id: invoice.id });
      expect((await settle(invoice.id)).userErrors).toEqual(conflict(/void/));
      expect((await run(CREDIT, { invoiceId: invoice.id })).userErrors).toEqual(conflict(/void/));
      expect(await settlementRows(invoice.id)).toEqual([]);
      expect(
        (
          await t.sql('select count(*)::int as n from invoice where credited_invoice_id = $1', [invoice.id])
        )[0],
      ).toEqual({ n: 0 });
    });
  });

  describe('invoiceMarkUncollectible', () => {
    it('writes off what is due; a late payment still settles it', async () => {
      const invoice = await booked();
      await settle(invoice.id, 300);
      const marked = await run(UNCOLLECTIBLE, { id: invoice.id });
      expect(marked.userErrors).toEqual([]);
      expect(marked.invoice).toMatchObject({
        collectionStatus: 'uncollectible',
        uncollectibleAt: expect.any(String),
        totalDue: 700,
        overdue: false,
      });
      expect((await row(invoice.id)).uncollectible_at).toEqual(expect.any(Date));
      expect((await run(UNCOLLECTIBLE, { id: invoice.id })).userErrors).toEqual(conflict(/already/));

      const paid = await settle(invoice.id, 700);
      expect(paid.invoice).toMatchObject({
        collectionStatus: 'paid',
        totalDue: 0,
        settlementStatus: 'settled',
      });
    });

    it('refuses a draft, a void invoice and a fully settled one', async () => {
      const { id } = await draft();
      expect((await run(UNCOLLECTIBLE, { id })).userErrors).toEqual(conflict(/draft/));

      const voided = await booked();
      await run(VOID, { id: voided.id });
      expect((await run(UNCOLLECTIBLE, { id: voided.id })).userErrors).toEqual(conflict(/void/));

      const paid = await booked();
      await settle(paid.id, 1000);
      expect((await run(UNCOLLECTIBLE, { id: paid.id })).userErrors).toEqual(conflict(/fully settled/));
      for (const invoiceId of [id, voided.id, paid.id])
        expect((await row(invoiceId)).uncollectible_at).toBeNull();
    });
  });

  describe('settlementReverse', () => {
    it('restores totalDue and settlementStatus with a negative settlement that names the original', async () => {
      const invoice = await booked();
      await settle(invoice.id, 400);
      const { settlement, invoice: paid } = await settle(invoice.id, 600);
      expect(paid).toMatchObject({ settlementStatus: 'settled', totalDue: 0, collectionStatus: 'paid' });

      const reversed = await run(REVERSE, { settlementId: settlement.id, reason: 'bounced' });
      expect(reversed.userErrors).toEqual([]);
      expect(reversed.reversal).toMatchObject({
        amount: -600,
        date: today(),
        reference: 'bank-1',
        note: 'bounced',
        reversesSettlementId: settlement.id,
      });
      expect(reversed.invoice).toMatchObject({
        settlementStatus: 'under_settled',
        totalDue: 600,
        collectionStatus: 'open',
      });
      expect(await settlementRows(invoice.id)).toEqual([
        { amount: '400', reverses_settlement_id: null },
        { amount: '600', reverses_settlement_id: null },
        { amount: '-600', reverses_settlement_id: settlement.id },
      ]);
      expect((await row(invoice.id)).settled_amount).toBe('400');
    });

    it('refuses a second reversal, a reversal of a reversal and an unknown settlement', async () => {
      const invoice = await booked();
      const { settlement } = await settle(invoice.id, 1000);
      const first = await run(REVERSE, { settlementId: settlement.id });
      expect(first.userErrors).toEqual([]);

      expect((await run(REVERSE, { settlementId: settlement.id })).userErrors).toEqual(
        conflict(/already been reversed/),
      );
      expect((await run(REVERSE, { settlementId: first.reversal.id })).userErrors).toEqual(
        conflict(/itself a reversal/),
      );
      expect(await settlementRows(invoice.id)).toHaveLength(2);
      expect((await row(invoice.id)).settled_amount).toBe('0');

      const missing = await run(REVERSE, { settlementId: randomUUID() });
      expect(missing.userErrors).toEqual([{ field: null, code: 'NOT_FOUND', message: expect.any(String) }]);
    });

    it('refuses what moved money through the customer balance, and the settlement of a credit note', async () => {
      // given an over-payment whose excess went to the balance, then the next invoice that used it
      const overpaid = await booked();
      const { settlement: payment } = await settle(overpaid.id, 1500);
      expect((await run(REVERSE, { settlementId: payment.id })).userErrors).toEqual(
        conflict(/customer balance/),
      );
      const next = await booked();
      const [applied] = next.settlements;
      expect(applied).toMatchObject({ amount: 500, reference: 'customer balance' });
      expect((await run(REVERSE, { settlementId: applied.id })).userErrors).toEqual(
        conflict(/customer balance/),
      );
      expect(await settlementRows(next.id)).toHaveLength(1);

      const credited = await booked();
      const creditNote = (await run(CREDIT, { invoiceId: credited.id })).creditNote;
      const bookedNote = await run(BOOK, { id: creditNote.id });
      const [own] = bookedNote.invoice.settlements;
      expect((await run(REVERSE, { settlementId: own.id })).userErrors).toEqual(conflict(/credit note/));
      expect(await settlementRows(creditNote.id)).toHaveLength(1);
    });

    it('lets only one of two racing reversals of a settlement through', async () => {
      const invoice = await booked();
      const { settlement } = await settle(invoice.id, 1000);
      const answers = await Promise.all([1, 2].map(() => run(REVERSE, { settlementId: settlement.id })));
      expect(answers.filter((answer) => answer.userErrors.length === 0)).toHaveLength(1);
      expect(await settlementRows(invoice.id)).toHaveLength(2);
    });
  });

  describe('overdue', () => {
    it('counts the days past the due date of an open invoice with something due', async () => {
      const invoice = await booked('2026-03-15');
      expect(invoice).toMatchObject({ overdue: true, daysOverdue: daysBetween('2026-03-15', today()) });
      const future = await booked('2999-01-01');
      expect(future).toMatchObject({ overdue: false, daysOverdue: 0 });
    });

    it('filters the list in SQL; void, uncollectible and paid invoices drop out', async () => {
      const open = await booked('2026-03-15');
      const voided = await booked('2026-03-15');
      const uncollectible = await booked('2026-03-15');
      const paid = await booked('2026-03-15');
      const notYetDue = await booked('2999-01-01');
      const unbooked = await draft('2026-03-15');
      const mine = [open, voided, uncollectible, paid, notYetDue, unbooked].map((invoice) => invoice.id);
      expect(await listed({ overdue: true })).toEqual(expect.arrayContaining([open.id, voided.id]));

      await run(VOID, { id: voided.id });
      await run(UNCOLLECTIBLE, { id: uncollectible.id });
      await settle(paid.id, 1000);

      const overdue = (await listed({ overdue: true })).filter((id: string) => mine.includes(id));
      expect(overdue).toEqual([open.id]);
      const others = (await listed({ overdue: false })).filter((id: string) => mine.includes(id));
      expect(others).toEqual(mine.filter((id) => id !== open.id));
      expect(await listed({ overdue: true, customerId, status: 'draft' })).toEqual([]);

      const ofCustomer = await f.gql(
        env,
        `query ($id: UUID!) { customer(id: $id) { invoices(filter: { overdue: true }, first: 100) { edges { node { id overdue } } } } }`,
        { id: customerId },
      );
      expect(ofCustomer.customer.invoices.edges.every((edge: any) => edge.node.overdue)).toBe(true);
      expect(ofCustomer.customer.invoices.edges.map((edge: any) => edge.node.id)).toContain(open.id);
    });
  });

  it('never ends with a void invoice that has a live settlement when void and settlement race', async () => {
    for (let round = 0; round < 10; round++) {
      const invoice = await booked();
      const [voided, settled] = await Promise.all([run(VOID, { id: invoice.id }), settle(invoice.id)]);
      // Exactly one wins: whichever locks the invoice first refuses the other.
      expect([voided.userErrors.length, settled.userErrors.length].sort()).toEqual([0, 1]);
      const state = await row(invoice.id);
      const live = await settlementRows(invoice.id);
      expect(state.voided_at !== null && live.length > 0, JSON.stringify({ state, live })).toBe(false);
      expect(state.settled_amount).toBe(state.voided_at === null ? '1000' : '0');
    }
  });
});
