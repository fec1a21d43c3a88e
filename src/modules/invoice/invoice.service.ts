import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { EnvironmentSchema } from '../../auth/environment.entity.ts';
import type { ServiceContext } from '../../context.ts';
import { leanFind } from '../../db/lean.ts';
import { type Connection, leanKeysetPage, type PageArgs } from '../../db/pagination.ts';
import { DomainError, type FieldIssue, type FieldPath } from '../../errors.ts';
import { loadOrNotFound } from '../../loaders.ts';
import { type Customer, CustomerSchema } from '../customer/customer.entity.ts';
import { CustomerService } from '../customer/customer.service.ts';
import { ProductSchema } from '../product/product.entity.ts';
import { TaxCodeSchema } from '../tax/tax-code.entity.ts';
import {
  computeLine,
  InvoiceArithmeticError,
  invoiceTotals,
  type LineAmounts,
  settlementStatus,
} from './invoice.arithmetic.ts';
import {
  type Invoice,
  type InvoiceCustomer,
  type InvoiceItem,
  InvoiceItemSchema,
  InvoiceSchema,
  type Settlement,
  SettlementSchema,
} from './invoice.entity.ts';
import type {
  CreditNoteCreateInput,
  InvoiceCreateInput,
  InvoiceFilter,
  InvoiceItemInput,
  InvoiceItemUpdateInput,
  InvoiceUpdateInput,
  SettlementInput,
} from './invoice.input.ts';
import { takeNextHandle } from './invoice-numbering.service.ts';

/** An invoice with everything its documents show (contract 2.1). */
export type InvoiceDocument = {
  invoice: Invoice;
  customer: InvoiceCustomer;
  items: InvoiceItem[];
  settlements: Settlement[];
};

/** The invoice as its JSON answer shows it, plus what only the printed document names. */
export type PrintableInvoice = InvoiceDocument & {
  /** The environment issuing the invoice. */
  seller: { name: string };
  /** For a credit note: the number of the invoice it credits. */
  creditedInvoiceHandle: string | null;
};

/** The fields of an item that the service works out from a request, and that a credit note copies. */
const ITEM_FIELDS = [
  'quantity',
  'unitAmount',
  'sku',
  'title',
  'description',
  'periodStart',
  'periodEnd',
  'taxCode',
  'taxRate',
  'discountPercentage',
  'discountAmount',
  'amount',
  'taxAmount',
] as const;
type ItemFields = Pick<InvoiceItem, (typeof ITEM_FIELDS)[number]>;

const customerSummary = (customer: Customer): InvoiceCustomer => ({
  id: customer.id,
  handle: customer.handle ?? null,
  name: customer.name,
  billingAddress: customer.billingAddress,
});

const today = (): string => new Date().toISOString().slice(0, 10);

/** `net<N>`: N days after `date`; no term, no due date. */
function dueDateFromTerm(date: string, paymentTerm: string | null | undefined): string | null {
  const days = paymentTerm ? /^net(\d+)$/.exec(paymentTerm)?.[1] : undefined;
  if (days === undefined) return null;
  const due = new Date(`${date}T00:00:00Z`);
  due.setUTCDate(due.getUTCDate() + Number(days));
  const iso = due.toISOString();
  if (!/^\d{4}-/.test(iso)) {
    throw DomainError.onField(
      'INVALID_INPUT',
      ['date'],
      "the customer's payment term puts the due date past 9999",
    );
  }
  return iso.slice(0, 10);
}

/** Applies the line arithmetic, reporting a refused figure at the item it is about. */
function lineAmounts(fields: Omit<ItemFields, 'amount' | 'taxAmount'>, path: FieldPath): LineAmounts {
  try {
    return computeLine({
      quantity: fields.quantity,
      unitAmount: fields.unitAmount,
      discountPercentage: fields.discountPercentage,
      discountAmount: fields.discountAmount,
      taxRate: fields.taxRate ?? null,
    });
  } catch (error) {
    if (!(error instanceof InvoiceArithmeticError)) throw error;
    throw DomainError.onField(
      'INVALID_INPUT',
      error.field === 'discount' ? [...path, 'discount'] : path,
      error.message,
    );
  }
}

function totalsOf(items: readonly LineAmounts[], path: FieldPath) {
  try {
    return invoiceTotals(items);
  } catch (error) {
    if (!(error instanceof InvoiceArithmeticError)) throw error;
    throw DomainError.onField('INVALID_INPUT', path, error.message);
  }
}

/** Invoices and credit notes of one environment: drafts, booking, settlements, credit notes. */
export class InvoiceService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  get(id: string): Promise<Invoice> {
    return loadOrNotFound(this.ctx.loaders.invoiceById, 'Invoice', id);
  }

  /** The customer as the invoice shows it: frozen when booked, the live customer while a draft. */
  async customerOf(invoice: Invoice): Promise<InvoiceCustomer> {
    if (invoice.customerSnapshot) return invoice.customerSnapshot;
    const customer = await this.ctx.loaders.customerById.load(invoice.customerId);
    if (!customer) throw new Error(`customer ${invoice.customerId} of invoice ${invoice.id} is missing`);
    return customerSummary(customer);
  }

  async document(invoice: Invoice): Promise<InvoiceDocument> {
    const [customer, items, settlements] = await Promise.all([
      this.customerOf(invoice),
      this.ctx.loaders.itemsByInvoiceId.load(invoice.id),
      this.ctx.loaders.settlementsByInvoiceId.load(invoice.id),
    ]);
    return { invoice, customer, items, settlements };
  }

  async read(id: string): Promise<InvoiceDocument> {
    // The id is all the lines and settlements need: they load alongside the invoice, not after it.
    const [invoice, items, settlements] = await Promise.all([
      this.get(id),
      this.ctx.loaders.itemsByInvoiceId.load(id),
      this.ctx.loaders.settlementsByInvoiceId.load(id),
    ]);
    return { invoice, customer: await this.customerOf(invoice), items, settlements };
  }

  /** The invoice with what its PDF names besides: the seller, and the invoice a credit note credits. */
  async readPrintable(id: string): Promise<PrintableInvoice> {
    const document = await this.read(id);
    const { creditedInvoiceId } = document.invoice;
    const [environment, credited] = await Promise.all([
      this.ctx.em.findOneOrFail(EnvironmentSchema, { id: this.ctx.environmentId }),
      creditedInvoiceId ? this.ctx.loaders.invoiceById.load(creditedInvoiceId) : null,
    ]);
    return {
      ...document,
      seller: { name: environment.name },
      creditedInvoiceHandle: credited?.handle ?? null,
    };
  }

  list(filter: InvoiceFilter, page: PageArgs): Promise<Connection<Invoice>> {
    return leanKeysetPage(
      this.ctx.em,
      InvoiceSchema,
      {
        environmentId: this.ctx.environmentId,
        customerId: filter.customerId ?? undefined,
        type: filter.type ?? undefined,
        status: filter.status ?? undefined,
        settlementStatus: filter.settlementStatus ?? undefined,
        date: { $gte: filter.dateFrom ?? undefined, $lte: filter.dateTo ?? undefined },
      },
      page,
    );
  }

  /** A new draft invoice (DESIGN §6). */
  async create(input: InvoiceCreateInput): Promise<Invoice> {
    const { em, environmentId } = this.ctx;
    const { customer, currency } = await new CustomerService(this.ctx).toBill(
      input.customerId,
      input.currency,
    );
    const dueDate = input.dueDate ?? dueDateFromTerm(input.date, customer.paymentTerm);
    const items = await this.resolveItems(em, input.items ?? [], (index) => ['items', index]);
    const totals = totalsOf(items, ['items']);
    const created = await this.transaction(async (tx) => {
      const invoice = tx.create(InvoiceSchema, {
        environmentId,
        type: 'invoice',
        status: 'draft',
        handle: null,
        customerId: customer.id,
        customerSnapshot: null,
        creditedInvoiceId: null,
        currency,
        date: input.date,
        dueDate,
        memo: input.memo ?? null,
        ...totals,
        settledAmount: 0,
        settlementStatus: settlementStatus(totals.totalInclVat, 0),
      });
      const lines = items.map((item) =>
        tx.create(InvoiceItemSchema, { environmentId, invoiceId: invoice.id, creditedItemId: null, ...item }),
      );
      return { invoice, lines };
    });
    // What the transaction wrote is what a read would find: the document needs no further queries.
    const byId = (a: InvoiceItem, b: InvoiceItem) => (a.id < b.id ? -1 : 1);
    this.ctx.loaders.itemsByInvoiceId.prime(created.invoice.id, created.lines.sort(byId));
    this.ctx.loaders.settlementsByInvoiceId.prime(created.invoice.id, []);
    return created.invoice;
  }

  /** Changes the date, due date, memo or currency of a draft. */
  async update(id: string, input: InvoiceUpdateInput): Promise<Invoice> {
    return this.change(id, async (_tx, invoice) => {
      this.assertDraft(invoice);
      if (
        input.currency !== undefined &&
        input.currency !== invoice.currency &&
        invoice.type === 'credit_note'
      ) {
        throw DomainError.onField(
          'CONFLICT',
          ['currency'],
          'a credit note keeps the currency of the invoice it credits',
        );
      }
      if (input.date !== undefined) invoice.date = input.date;
      if (input.dueDate !== undefined) invoice.dueDate = input.dueDate;
      if (input.memo !== undefined) invoice.memo = input.memo;
      if (input.currency !== undefined) invoice.currency = input.currency;
      if (invoice.dueDate && invoice.dueDate < invoice.date) {
        throw DomainError.onField('INVALID_INPUT', ['dueDate'], 'must not be before the invoice date');
      }
      invoice.updatedAt = new Date();
      return invoice;
    });
  }

  async addItem(
    invoiceId: string,
    input: InvoiceItemInput,
  ): Promise<{ invoice: Invoice; item: InvoiceItem }> {
    return this.change(invoiceId, async (tx, invoice) => {
      this.assertItemsEditable(invoice);
      const [fields] = await this.resolveItems(tx, [input], () => []);
      const item = tx.create(InvoiceItemSchema, {
        environmentId: this.ctx.environmentId,
        invoiceId,
        creditedItemId: null,
        ...(fields as ItemFields),
      });
      await this.refreshTotals(tx, invoice);
      return { invoice, item };
    });
  }

  /** Changes the fields present in `input`; `null` clears one. A new tax code brings its current rate. */
  async updateItem(
    id: string,
    input: InvoiceItemUpdateInput,
  ): Promise<{ invoice: Invoice; item: InvoiceItem }> {
    const invoiceId = await this.invoiceIdOfItem(id);
    return this.change(invoiceId, async (tx, invoice) => {
      this.assertItemsEditable(invoice);
      const item = await this.itemUnderLock(tx, id);
      const { discount, taxCode, ...plain } = input;
      for (const [key, value] of Object.entries(plain)) {
        if (value !== undefined) Object.assign(item, { [key]: value });
      }
      if (discount !== undefined) {
        item.discountPercentage = discount?.percentage ?? '0';
        item.discountAmount = discount?.amount ?? '0';
      }
      if (taxCode !== undefined) {
        item.taxCode = taxCode;
        item.taxRate = taxCode === null ? null : await this.taxRateOf(tx, taxCode, ['taxCode']);
      }
      if (item.periodStart && item.periodEnd && item.periodStart > item.periodEnd) {
        throw DomainError.onField('INVALID_INPUT', ['periodEnd'], 'must not be before periodStart');
      }
      Object.assign(item, lineAmounts(item, []));
      await this.refreshTotals(tx, invoice);
      return { invoice, item };
    });
  }

  async removeItem(id: string): Promise<Invoice> {
    const invoiceId = await this.invoiceIdOfItem(id);
    return this.change(invoiceId, async (tx, invoice) => {
      this.assertDraft(invoice);
      tx.remove(await this.itemUnderLock(tx, id));
      await this.refreshTotals(tx, invoice);
      return invoice;
    });
  }

  /** Deletes a draft and its items; returns its id. */
  async delete(id: string): Promise<string> {
    return this.change(id, async (tx, invoice) => {
      this.assertDraft(invoice);
      // Through the unit of work, not a bulk delete: the audit trail records each removed line.
      const items = await tx.find(InvoiceItemSchema, {
        invoiceId: id,
        environmentId: this.ctx.environmentId,
      });
      for (const item of items) tx.remove(item);
      tx.remove(invoice);
      return id;
    });
  }

  /**
   * Books a draft: takes the next gapless number of its type, freezes the customer onto it and,
   * for a credit note, settles its total on the invoice it credits. All in one transaction.
   */
  async book(id: string): Promise<Invoice> {
    try {
      return await this.change(id, async (tx, invoice) => {
        this.assertDraft(invoice);
        const { environmentId } = this.ctx;
        if ((await tx.count(InvoiceItemSchema, { invoiceId: id, environmentId })) === 0) {
          throw new DomainError('CONFLICT', 'an invoice needs at least one item to be booked');
        }
        const customer = await tx.findOneOrFail(CustomerSchema, { id: invoice.customerId, environmentId });
        invoice.handle = await takeNextHandle(tx, environmentId, invoice.type);
        invoice.status = 'booked';
        invoice.customerSnapshot = customerSummary(customer);
        invoice.bookedAt = new Date();
        invoice.updatedAt = invoice.bookedAt;
        if (invoice.creditedInvoiceId) await this.applyCreditNote(tx, invoice, invoice.creditedInvoiceId);
        await tx.flush();
        return invoice;
      });
    } catch (error) {
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
      throw new DomainError(
        'CONFLICT',
        'the next number is already used by another invoice of this environment (its prefix was used before); choose another prefix',
      );
    }
  }

  /** Records a settlement of a booked invoice; its status and amount due follow. */
  async settle(id: string, input: SettlementInput): Promise<{ invoice: Invoice; settlement: Settlement }> {
    return this.change(id, async (tx, invoice) => {
      if (invoice.status !== 'booked') {
        throw new DomainError('CONFLICT', 'only booked invoices can be settled; book the draft first');
      }
      const direction = invoice.totalInclVat < 0 ? -1 : 1;
      if (Math.sign(input.amount) !== direction) {
        throw DomainError.onField(
          'INVALID_INPUT',
          ['amount'],
          direction > 0
            ? 'must be more than 0'
            : 'must be less than 0: the invoice total is negative, so settling it pays money out',
        );
      }
      const settlement = this.addSettlement(tx, invoice, {
        date: input.date,
        amount: input.amount,
        reference: input.reference ?? null,
        note: input.note ?? null,
      });
      return { invoice, settlement };
    });
  }

  /**
   * A draft credit note for some or all lines of a booked invoice, each line credited in full and
   * at most once (drafts included: deleting a draft credit note frees its lines).
   */
  async createCreditNote(invoiceId: string, input: CreditNoteCreateInput): Promise<Invoice> {
    const { environmentId } = this.ctx;
    const creditNote = await this.transaction(async (tx) => {
      const original = await this.lock(tx, invoiceId);
      if (original.type === 'credit_note') {
        throw new DomainError('CONFLICT', 'a credit note cannot itself be credited');
      }
      if (original.status !== 'booked') {
        throw new DomainError('CONFLICT', 'only booked invoices can be credited');
      }
      const lines = await tx.find(
        InvoiceItemSchema,
        { invoiceId, environmentId },
        { orderBy: { id: 'asc' } },
      );
      const credits = await tx.find(InvoiceItemSchema, {
        environmentId,
        creditedItemId: { $in: lines.map((line) => line.id) },
      });
      const credited = new Set(credits.map((credit) => credit.creditedItemId));
      const selected = input.itemIds
        ? this.selectLines(lines, credited, input.itemIds)
        : lines.filter((line) => !credited.has(line.id));
      if (selected.length === 0) {
        throw new DomainError('CONFLICT', 'every line of this invoice has already been credited');
      }
      const totals = totalsOf(selected, ['itemIds']);
      const note = tx.create(InvoiceSchema, {
        environmentId,
        type: 'credit_note',
        status: 'draft',
        handle: null,
        customerId: original.customerId,
        customerSnapshot: null,
        creditedInvoiceId: original.id,
        currency: original.currency,
        date: input.date ?? today(),
        dueDate: null,
        memo: input.memo ?? null,
        ...totals,
        settledAmount: 0,
        settlementStatus: settlementStatus(totals.totalInclVat, 0),
      });
      for (const line of selected) {
        const copy = Object.fromEntries(ITEM_FIELDS.map((field) => [field, line[field]])) as ItemFields;
        tx.create(InvoiceItemSchema, { environmentId, invoiceId: note.id, creditedItemId: line.id, ...copy });
      }
      return note;
    });
    this.forget(invoiceId);
    return creditNote;
  }

  private selectLines(
    lines: InvoiceItem[],
    credited: Set<string | null | undefined>,
    itemIds: string[],
  ): InvoiceItem[] {
    const byId = new Map(lines.map((line) => [line.id, line]));
    const unknown: FieldIssue[] = [];
    const taken: FieldIssue[] = [];
    itemIds.forEach((id, index) => {
      if (!byId.has(id)) unknown.push({ path: ['itemIds', index], message: 'is not a line of this invoice' });
      else if (credited.has(id))
        taken.push({ path: ['itemIds', index], message: 'this line has already been credited' });
    });
    if (unknown.length > 0) {
      throw new DomainError(
        'INVALID_REFERENCE',
        'The request names lines the invoice does not have',
        unknown,
      );
    }
    if (taken.length > 0) {
      throw new DomainError('CONFLICT', 'The request names lines that have already been credited', taken);
    }
    return lines.filter((line) => itemIds.includes(line.id));
  }

  /** Booking a credit note settles its total on the credited invoice, and the credit note by it. */
  private async applyCreditNote(
    tx: EntityManager,
    creditNote: Invoice,
    creditedInvoiceId: string,
  ): Promise<void> {
    const original = await this.lock(tx, creditedInvoiceId);
    const amount = creditNote.totalInclVat;
    if (amount === 0) return;
    this.addSettlement(tx, original, {
      date: creditNote.date,
      amount,
      reference: creditNote.handle,
      note: 'Credit note',
    });
    this.addSettlement(tx, creditNote, {
      date: creditNote.date,
      amount,
      reference: original.handle,
      note: 'Applied to the credited invoice',
    });
    this.forget(original.id);
  }

  private addSettlement(
    tx: EntityManager,
    invoice: Invoice,
    fields: Pick<Settlement, 'date' | 'amount' | 'reference' | 'note'>,
  ): Settlement {
    const settledAmount = invoice.settledAmount + fields.amount;
    if (!Number.isSafeInteger(settledAmount)) {
      throw DomainError.onField(
        'INVALID_INPUT',
        ['amount'],
        'the settled sum would exceed the largest supported amount',
      );
    }
    const settlement = tx.create(SettlementSchema, {
      environmentId: this.ctx.environmentId,
      invoiceId: invoice.id,
      ...fields,
    });
    invoice.settledAmount = settledAmount;
    invoice.settlementStatus = settlementStatus(invoice.totalInclVat, settledAmount);
    invoice.updatedAt = new Date();
    return settlement;
  }

  /**
   * Resolves item requests into item fields: product defaults by sku, tax codes to rates (one query
   * each for the whole list), then the line arithmetic. Reports every bad item at once.
   */
  private async resolveItems(
    em: EntityManager,
    inputs: readonly InvoiceItemInput[],
    pathOf: (index: number) => FieldPath,
  ): Promise<ItemFields[]> {
    const { environmentId } = this.ctx;
    const skus = [...new Set(inputs.flatMap((input) => (input.sku ? [input.sku] : [])))];
    const products =
      skus.length > 0 ? await leanFind(em, ProductSchema, { environmentId, handle: skus }) : [];
    const productBySku = new Map(products.map((product) => [product.handle, product]));
    const drafts = inputs.map((input) => {
      const product = input.sku ? productBySku.get(input.sku) : undefined;
      return {
        input,
        title: input.title ?? product?.name ?? null,
        description: input.description ?? product?.description ?? null,
        taxCode: input.taxCode ?? product?.taxCode ?? null,
      };
    });
    const codes = [...new Set(drafts.flatMap((draft) => (draft.taxCode ? [draft.taxCode] : [])))];
    const taxCodes =
      codes.length > 0 ? await leanFind(em, TaxCodeSchema, { environmentId, code: codes }) : [];
    const rateByCode = new Map(taxCodes.map((taxCode) => [taxCode.code, taxCode.rate]));

    const invalid: FieldIssue[] = [];
    const unknown: FieldIssue[] = [];
    drafts.forEach((draft, index) => {
      if (!draft.title) {
        invalid.push({
          path: [...pathOf(index), 'title'],
          message: 'is required unless sku is the handle of a product',
        });
      }
      if (draft.taxCode && !rateByCode.has(draft.taxCode)) {
        unknown.push({
          path: [...pathOf(index), 'taxCode'],
          message: 'is not a tax code of this environment',
        });
      }
    });
    if (invalid.length > 0) throw DomainError.invalidInput(invalid);
    if (unknown.length > 0) {
      throw new DomainError('INVALID_REFERENCE', 'The request names tax codes that do not exist', unknown);
    }

    return drafts.map(({ input, title, description, taxCode }, index) => {
      const fields = {
        quantity: input.quantity,
        unitAmount: input.unitAmount,
        sku: input.sku ?? null,
        title: title as string,
        description,
        periodStart: input.periodStart ?? null,
        periodEnd: input.periodEnd ?? null,
        taxCode,
        taxRate: taxCode ? (rateByCode.get(taxCode) as string) : null,
        discountPercentage: input.discount?.percentage ?? '0',
        discountAmount: input.discount?.amount ?? '0',
      };
      return { ...fields, ...lineAmounts(fields, pathOf(index)) };
    });
  }

  private async taxRateOf(em: EntityManager, code: string, path: FieldPath): Promise<string> {
    const taxCode = await em.findOne(TaxCodeSchema, { environmentId: this.ctx.environmentId, code });
    if (!taxCode)
      throw DomainError.onField('INVALID_REFERENCE', path, 'is not a tax code of this environment');
    return taxCode.rate;
  }

  private async refreshTotals(tx: EntityManager, invoice: Invoice): Promise<void> {
    await tx.flush();
    const items = await tx.find(InvoiceItemSchema, {
      invoiceId: invoice.id,
      environmentId: this.ctx.environmentId,
    });
    Object.assign(invoice, totalsOf(items, []));
    invoice.settlementStatus = settlementStatus(invoice.totalInclVat, invoice.settledAmount);
    invoice.updatedAt = new Date();
  }

  private async invoiceIdOfItem(id: string): Promise<string> {
    const item = await this.ctx.em.findOne(InvoiceItemSchema, { id, environmentId: this.ctx.environmentId });
    if (!item) throw DomainError.notFound('Invoice item', id);
    return item.invoiceId;
  }

  /** Re-reads an item once its invoice is locked: every change to items holds that lock. */
  private async itemUnderLock(tx: EntityManager, id: string): Promise<InvoiceItem> {
    const item = await tx.findOne(InvoiceItemSchema, { id, environmentId: this.ctx.environmentId });
    if (!item) throw DomainError.notFound('Invoice item', id);
    return item;
  }

  private assertDraft(invoice: Invoice): void {
    if (invoice.status !== 'draft') {
      throw new DomainError(
        'CONFLICT',
        `${invoice.handle} is booked; a booked invoice can no longer be changed`,
      );
    }
  }

  private assertItemsEditable(invoice: Invoice): void {
    this.assertDraft(invoice);
    if (invoice.type === 'credit_note') {
      throw new DomainError(
        'CONFLICT',
        'the lines of a credit note are those of the invoice it credits; remove lines or create another credit note',
      );
    }
  }

  /** Locks the invoice row for the rest of the transaction; another environment's id is not found. */
  private async lock(tx: EntityManager, id: string): Promise<Invoice> {
    const invoice = await tx.findOne(
      InvoiceSchema,
      { id, environmentId: this.ctx.environmentId },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!invoice) throw DomainError.notFound('Invoice', id);
    return invoice;
  }

  /** Runs `change` on the locked invoice in a transaction, then drops what the loaders knew of it. */
  private async change<T>(
    id: string,
    change: (tx: EntityManager, invoice: Invoice) => Promise<T>,
  ): Promise<T> {
    const result = await this.transaction(async (tx) => change(tx, await this.lock(tx, id)));
    this.forget(id);
    return result;
  }

  private transaction<T>(run: (tx: EntityManager) => Promise<T>): Promise<T> {
    // A fresh identity map: what the request loaded before must not stand in for the locked rows.
    return this.ctx.em.transactional((tx) => run(tx as EntityManager), { clear: true });
  }

  private forget(invoiceId: string): void {
    this.ctx.loaders.invoiceById.clear(invoiceId);
    this.ctx.loaders.itemsByInvoiceId.clear(invoiceId);
    this.ctx.loaders.settlementsByInvoiceId.clear(invoiceId);
  }
}
