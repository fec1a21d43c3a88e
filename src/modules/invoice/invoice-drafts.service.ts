import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../context.ts';
import { dueDateFromTerm, OutsideCalendarError } from '../../dates/calendar.ts';
import { leanFind } from '../../db/lean.ts';
import { newRow } from '../../db/lean-write.ts';
import { cachedRead } from '../../db/read-cache.ts';
import { writeTogether } from '../../db/tenant-transaction.ts';
import { DomainError, type FieldIssue, type FieldPath } from '../../errors.ts';
import { BilledPeriodSchema } from '../billing/billing-run.entity.ts';
import { billable, CustomerService } from '../customer/customer.service.ts';
import { recordEvent, writeChange } from '../event/event.service.ts';
import { ProductSchema } from '../product/product.entity.ts';
import { ProrationLineSchema } from '../subscription/subscription.entity.ts';
import { TaxCodeSchema } from '../tax/tax-code.entity.ts';
import {
  computeLine,
  InvoiceArithmeticError,
  type LineAmounts,
  settlementStatus,
} from './invoice.arithmetic.ts';
import { assertDraft, changeInvoice, customerSummary, type ItemFields, totalsOf } from './invoice.change.ts';
import { type Invoice, type InvoiceItem, InvoiceItemSchema, InvoiceSchema } from './invoice.entity.ts';
import { answerEvent } from './invoice.events.ts';
import {
  type InvoiceCreateInput,
  type InvoiceItemInput,
  type InvoiceItemUpdateInput,
  type InvoiceUpdateInput,
  MAX_LINES_PER_INVOICE,
} from './invoice.input.ts';
import { type InvoiceDocument, invoiceLoaders } from './invoice.reads.ts';
import { type InvoiceAnswer, invoiceResponse } from './invoice.rest.ts';
import { applyTaxPolicy, customerWithTaxRounding, retaxDraft, taxPolicyOf } from './invoice-tax.service.ts';

/** Rows in id order: the order every read of an invoice's lines gives. */
const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1);

/** The due date the customer's payment term gives, reported at `date` when it would pass year 9999. */
function dueDateOf(date: string, paymentTerm: string | null | undefined): string | null {
  try {
    return dueDateFromTerm(date, paymentTerm);
  } catch (error) {
    if (!(error instanceof OutsideCalendarError)) throw error;
    throw DomainError.onField(
      'INVALID_INPUT',
      ['date'],
      "the customer's payment term puts the due date past 9999",
    );
  }
}

/**
 * Applies the line arithmetic, reporting a refused figure at the item it is about. The tax it gives
 * is the line's own; the invoice's tax policy then sets every line's (invoice-tax.service.ts).
 */
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

/** Drafts of one environment: creating them, changing them and their items, deleting them. */
/** What a billing run's invoice line charges: a billed period or a proration line. */
export type ItemLink = { billedPeriodId?: string | null; prorationLineId?: string | null };

export class InvoiceDraftService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  /**
   * A new draft invoice (DESIGN §6). A billing run passes `links`, one per item: the billed period or
   * proration line each line charges, so that removing the line releases it.
   *
   * A draft of the API (no links) is read and written lean: the customer with the environment's tax
   * rounding in one statement, then the invoice, its lines, their audit events and the
   * `invoice.created` event in one (writeChange), no unit of work. A billing run's or a subscription
   * change's draft (links) joins its caller's unit of work instead: its lines reference rows that work
   * has pending, and the caller goes on with the managed invoice (booking it).
   */
  async create(input: InvoiceCreateInput, links: readonly ItemLink[] = []): Promise<Invoice> {
    if (links.length === 0) return (await this.createAnswered(input)).invoice;
    const { em, environmentId } = this.ctx;
    const { draft, items, lineOf, created } = await this.drafted(input, links);
    // Only writes: in a REST request's transaction they need no savepoint (writeTogether).
    const { invoice, document } = await writeTogether(em, async (tx) => {
      const invoice = tx.create(InvoiceSchema, draft);
      const lines = items.map((item, index) => tx.create(InvoiceItemSchema, lineOf(item, index, invoice.id)));
      const { document, answer } = created(invoice, lines);
      recordEvent(tx, environmentId, answerEvent('invoice.created', answer));
      return { invoice, document };
    });
    this.primeLoaders(document);
    return invoice;
  }

  /**
   * A new draft of the API (create without links) with its answer: the invoice as its REST answer shows
   * it, the very object its `invoice.created` event carries, built once from the rows written.
   */
  async createAnswered(input: InvoiceCreateInput): Promise<{ invoice: Invoice; answer: InvoiceAnswer }> {
    const { em, environmentId } = this.ctx;
    const { invoice, lines, document, answer, event } = await this.draftRows(input, []);
    await writeChange(em, environmentId, {
      created: [
        { entity: InvoiceSchema, rows: [invoice] },
        { entity: InvoiceItemSchema, rows: lines },
      ],
      events: [event],
    });
    this.ctx.loaders.of(invoiceLoaders).byId.prime(invoice.id, invoice);
    this.primeLoaders(document);
    return { invoice, answer };
  }

  /** What the transaction wrote is what a read would find: the new draft's reads need no further queries. */
  private primeLoaders({ invoice, items }: InvoiceDocument): void {
    this.ctx.loaders.of(invoiceLoaders).itemsByInvoiceId.prime(invoice.id, items);
    this.ctx.loaders.of(invoiceLoaders).settlementsByInvoiceId.prime(invoice.id, []);
  }

  /**
   * A new draft made in memory as create writes it, nothing written or tracked: the invoice and its lines
   * (newRow), its document and answer as reads would show them, and its `invoice.created` event. An API
   * draft's are written at once (create); a billing batch's set-based booking writes its drafts together
   * with the batch's others.
   */
  async draftRows(input: InvoiceCreateInput, links: readonly ItemLink[]) {
    const { em } = this.ctx;
    const { draft, items, lineOf, created } = await this.drafted(input, links);
    const invoice = newRow(em, InvoiceSchema, draft);
    const lines = items.map((item, index) => newRow(em, InvoiceItemSchema, lineOf(item, index, invoice.id)));
    const { document, answer } = created(invoice, lines);
    return { invoice, lines, document, answer, event: answerEvent('invoice.created', answer) };
  }

  /**
   * What a new draft is (create): the invoice's fields (its lines' in `items`), how each line's row is
   * made, and what it is once made (`created`: its document and answer). An API draft (no links) reads
   * the customer lean, with the environment's tax rounding; a run's, through the loaders its batch primed.
   */
  private async drafted(input: InvoiceCreateInput, links: readonly ItemLink[]) {
    const { em, environmentId } = this.ctx;
    const lean = links.length === 0;
    // The tax codes the items name are read with the customer; a product's (by sku) after it.
    const namedCodes = [...new Set((input.items ?? []).flatMap((item) => item.taxCode ?? []))];
    const read = lean ? await customerWithTaxRounding(this.ctx, input.customerId, namedCodes) : null;
    const { customer, currency } = lean
      ? billable(read?.customer ?? null, input.currency)
      : await new CustomerService(this.ctx).toBill(input.customerId, input.currency);
    const dueDate = input.dueDate ?? dueDateOf(input.date, customer.paymentTerm);
    const ratesRead = read ? { codes: new Set(namedCodes), rates: read.taxRates } : undefined;
    const items = await this.resolveItems(em, input.items ?? [], (index) => ['items', index], ratesRead);
    const policy = read
      ? { taxRounding: read.taxRounding, taxExempt: customer.taxExempt }
      : await taxPolicyOf(this.ctx, em, customer);
    applyTaxPolicy(items, policy, ['items']);
    const totals = totalsOf(items, ['items']);
    const draft = {
      environmentId,
      type: 'invoice',
      status: 'draft',
      handle: null,
      customerId: customer.id,
      customerSnapshot: null,
      sellerSnapshot: null,
      creditedInvoiceId: null,
      currency,
      date: input.date,
      dueDate,
      memo: input.memo ?? null,
      ...totals,
      ...policy,
      settledAmount: 0,
      settlementStatus: settlementStatus(totals.totalInclVat, 0),
    } satisfies Partial<Invoice>;
    const lineOf = (item: ItemFields, index: number, invoiceId: string) => ({
      environmentId,
      invoiceId,
      creditedItemId: null,
      billedPeriodId: links[index]?.billedPeriodId ?? null,
      prorationLineId: links[index]?.prorationLineId ?? null,
      ...item,
    });
    // The new draft as every read finds it (its lines in id order, no settlements) and its answer: the
    // `invoice.created` event's data and the REST answer are one object, so their items share one order.
    const created = (invoice: Invoice, lines: readonly InvoiceItem[]) => {
      const document: InvoiceDocument = {
        invoice,
        customer: customerSummary(customer),
        items: lines.toSorted(byId),
        settlements: [],
      };
      return { document, answer: invoiceResponse(document) };
    };
    return { draft, items, lineOf, created };
  }

  /** Changes the date, due date, memo or currency of a draft. */
  async update(id: string, input: InvoiceUpdateInput): Promise<Invoice> {
    return changeInvoice(this.ctx, id, async (_tx, invoice) => {
      assertDraft(invoice);
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
    return changeInvoice(this.ctx, invoiceId, async (tx, invoice) => {
      this.assertItemsEditable(invoice);
      // Counted under the invoice's lock, so two additions cannot both take the last place.
      const lines = await tx.count(InvoiceItemSchema, { invoiceId, environmentId: this.ctx.environmentId });
      if (lines >= MAX_LINES_PER_INVOICE) {
        throw DomainError.onField(
          'CONFLICT',
          [],
          `an invoice has at most ${MAX_LINES_PER_INVOICE} lines and this one has ${lines}; start another invoice`,
        );
      }
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
    return changeInvoice(this.ctx, invoiceId, async (tx, invoice) => {
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

  /**
   * Removes a line of a draft. A billing run's line releases what it charges for the next run: a billed
   * period (with the period's other lines, which bill it together) or a proration line.
   */
  async removeItem(id: string): Promise<Invoice> {
    const invoiceId = await this.invoiceIdOfItem(id);
    const { environmentId } = this.ctx;
    return changeInvoice(this.ctx, invoiceId, async (tx, invoice) => {
      assertDraft(invoice);
      const item = await this.itemUnderLock(tx, id);
      tx.remove(item);
      if (item.billedPeriodId) {
        const period = await tx.findOne(BilledPeriodSchema, { environmentId, id: item.billedPeriodId });
        if (period?.invoiceId === invoice.id) period.invoiceId = null;
        const siblings = await tx.find(InvoiceItemSchema, {
          environmentId,
          invoiceId: invoice.id,
          billedPeriodId: item.billedPeriodId,
          id: { $ne: item.id },
        });
        for (const sibling of siblings) tx.remove(sibling);
      }
      if (item.prorationLineId) {
        const line = await tx.findOne(ProrationLineSchema, { environmentId, id: item.prorationLineId });
        if (line?.invoiceId === invoice.id) line.invoiceId = null;
      }
      await this.refreshTotals(tx, invoice);
      return invoice;
    });
  }

  /** Deletes a draft and its items; returns its id. */
  async delete(id: string): Promise<string> {
    return changeInvoice(this.ctx, id, async (tx, invoice) => {
      assertDraft(invoice);
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
   * Resolves item requests into item fields: product defaults by sku, tax codes to rates (one query
   * each for the whole list), then the line arithmetic. Reports every bad item at once. `ratesRead`: the
   * rates of `codes` read already (those of them that exist); only the other codes are read here.
   */
  private async resolveItems(
    em: EntityManager,
    inputs: readonly InvoiceItemInput[],
    pathOf: (index: number) => FieldPath,
    ratesRead?: { codes: ReadonlySet<string>; rates: ReadonlyMap<string, string> },
  ): Promise<ItemFields[]> {
    const { environmentId } = this.ctx;
    const skus = [...new Set(inputs.flatMap((input) => (input.sku ? [input.sku] : [])))];
    const products =
      skus.length > 0
        ? await cachedRead(`products-by-sku:${environmentId}:${[...skus].sort().join(',')}`, () =>
            leanFind(em, ProductSchema, { environmentId, handle: skus }),
          )
        : [];
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
    const codes = [...new Set(drafts.flatMap((draft) => (draft.taxCode ? [draft.taxCode] : [])))].filter(
      (code) => !ratesRead?.codes.has(code),
    );
    const taxCodes =
      codes.length > 0
        ? await cachedRead(`tax-codes:${environmentId}:${[...codes].sort().join(',')}`, () =>
            leanFind(em, TaxCodeSchema, { environmentId, code: codes }),
          )
        : [];
    const rateByCode = new Map([
      ...(ratesRead?.rates ?? []),
      ...taxCodes.map((taxCode) => [taxCode.code, taxCode.rate] as const),
    ]);

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
        taxBehavior: input.taxBehavior ?? 'exclusive',
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
    // Under document rounding one line's change moves the tax of the others in its group; a credit
    // note keeps the amounts of the lines it credits.
    if (invoice.type === 'invoice') {
      await retaxDraft(this.ctx, tx, invoice, items);
    } else {
      Object.assign(invoice, totalsOf(items, []));
      invoice.settlementStatus = settlementStatus(invoice.totalInclVat, invoice.settledAmount);
    }
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

  private assertItemsEditable(invoice: Invoice): void {
    assertDraft(invoice);
    if (invoice.type === 'credit_note') {
      throw new DomainError(
        'CONFLICT',
        'the lines of a credit note are those of the invoice it credits; remove lines or create another credit note',
      );
    }
  }
}
