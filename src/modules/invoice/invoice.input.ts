import { z } from 'zod';
import { CalendarDate } from '../../dates/calendar.ts';
import { CurrencyCode } from '../../money/currency.ts';
import { Decimal } from '../../money/decimal.ts';
import { Uuid } from '../../validation.ts';
import { TAX_BEHAVIORS } from '../tax/tax-policy.ts';
import { SETTLEMENT_STATUSES } from './invoice.arithmetic.ts';
import { INVOICE_STATUSES, INVOICE_TYPES } from './invoice.entity.ts';

/**
 * Most lines one invoice may have: it bounds what reading, printing and booking one invoice cost.
 * Billing runs start another invoice for the lines beyond it.
 */
export const MAX_LINES_PER_INVOICE = 1000;

/**
 * An exact decimal sent as a JSON (or GraphQL Float) number, as a normalised decimal string. At most
 * 15 significant digits, which every double keeps exactly, so the value is the one the client wrote.
 */
export const exactDecimal = (places: number) =>
  z
    .number()
    .refine(
      (value) => new Decimal(value).decimalPlaces() <= places,
      `must have at most ${places} decimal places`,
    )
    .refine((value) => new Decimal(value).precision(true) <= 15, 'must have at most 15 significant digits')
    .transform((value) => new Decimal(value).toFixed());

const Percentage = z.number().min(0).max(100).pipe(exactDecimal(4));

const text = (max: number) => z.string().trim().min(1).max(max);

const Discount = z.strictObject({
  percentage: Percentage.nullish(),
  amount: exactDecimal(6).nullish(),
});

/** Each writable item field and its rules, declared once for the REST body and the GraphQL inputs. */
const itemFields = {
  quantity: exactDecimal(6),
  unitAmount: exactDecimal(6),
  sku: text(250).nullish(),
  title: text(500).nullish(),
  description: text(4000).nullish(),
  periodStart: CalendarDate.nullish(),
  periodEnd: CalendarDate.nullish(),
  taxCode: text(64).nullish(),
  discount: Discount.nullish(),
};

const periodInOrder = (item: { periodStart?: string | null; periodEnd?: string | null }) =>
  !item.periodStart || !item.periodEnd || item.periodStart <= item.periodEnd;
const periodRule = { path: ['periodEnd'], message: 'must not be before periodStart' };

/** GraphQL only: the REST item keeps the fields the contract lists. */
const TaxBehaviorInput = z.enum(TAX_BEHAVIORS);

/** An item to add: `title` may be left out when `sku` names a product (checked by the service). */
export const InvoiceItemInput = z
  .strictObject({ ...itemFields, taxBehavior: TaxBehaviorInput.nullish() })
  .refine(periodInOrder, periodRule);
export type InvoiceItemInput = z.infer<typeof InvoiceItemInput>;

/** An item of `POST /invoices`, as the contract lists its fields. */
const InvoiceItemBody = z.strictObject(itemFields).refine(periodInOrder, periodRule);

/** A partial item update: an absent field stays as it is, `null` clears it. */
export const InvoiceItemUpdateInput = z
  .strictObject({
    ...itemFields,
    quantity: itemFields.quantity.optional(),
    unitAmount: itemFields.unitAmount.optional(),
    title: text(500).optional(),
    // null goes back to the default, as a cleared field does.
    taxBehavior: TaxBehaviorInput.nullish().transform((behavior) =>
      behavior === null ? ('exclusive' as const) : behavior,
    ),
  })
  .refine(periodInOrder, periodRule);
export type InvoiceItemUpdateInput = z.infer<typeof InvoiceItemUpdateInput>;

const dueDateInOrder = (input: { date?: string; dueDate?: string | null }) =>
  !input.date || !input.dueDate || input.dueDate >= input.date;
const dueDateRule = { path: ['dueDate'], message: 'must not be before the invoice date' };

const itemList = <T extends z.ZodType>(item: T) =>
  z.array(item).max(MAX_LINES_PER_INVOICE, `an invoice has at most ${MAX_LINES_PER_INVOICE} lines`);
const Items = itemList(InvoiceItemInput);

const invoiceFields = {
  customerId: Uuid,
  currency: CurrencyCode.nullish(),
  date: CalendarDate,
  dueDate: CalendarDate.nullish(),
  memo: z.string().max(400).nullish(),
  items: Items.nullish(),
};

/** A new draft: `currency` and `dueDate` fall back to the customer's, `items` to none. */
export const InvoiceCreateInput = z.strictObject(invoiceFields).refine(dueDateInOrder, dueDateRule);
export type InvoiceCreateInput = z.infer<typeof InvoiceCreateInput>;

/**
 * Body of `POST /invoices`. The contract lists `currency` and `items` as required "string or null" and
 * "array or null"; an absent key is taken as the null it would carry (the customer's currency, no
 * lines) rather than refused, since refusing it makes clients send `null` for nothing.
 */
export const InvoiceCreateBody = z
  .strictObject({
    ...invoiceFields,
    currency: CurrencyCode.nullish().meta({
      description:
        "Absent or null: the customer's currency (the contract requires the key; absent is accepted)",
    }),
    items: itemList(InvoiceItemBody)
      .nullish()
      .meta({ description: 'Absent or null: no lines (the contract requires the key; absent is accepted)' }),
  })
  .refine(dueDateInOrder, dueDateRule);

/** Fields of the invoice response that are not request fields; the contract says they are ignored. */
export const INVOICE_READ_ONLY_FIELDS = [
  'id',
  'handle',
  'settlements',
  'totalExclVat',
  'totalVat',
  'totalInclVat',
  'totalDue',
] as const;

/** A partial update of a draft: an absent field stays as it is, `null` clears it. */
export const InvoiceUpdateInput = z
  .strictObject({
    date: CalendarDate.optional(),
    dueDate: CalendarDate.nullish(),
    memo: z.string().max(400).nullish(),
    currency: CurrencyCode.optional(),
  })
  .refine(dueDateInOrder, dueDateRule);
export type InvoiceUpdateInput = z.infer<typeof InvoiceUpdateInput>;

/**
 * A payment (or other settlement) of a booked invoice, in minor units: received for a positive
 * total, paid out (negative) for a negative one.
 */
export const SettlementInput = z.strictObject({
  date: CalendarDate,
  amount: z.int().refine((amount) => amount !== 0, 'must not be 0'),
  reference: text(250).nullish(),
  note: text(1000).nullish(),
});
export type SettlementInput = z.infer<typeof SettlementInput>;

/** Which lines of a booked invoice to credit (all not yet credited when left out). */
export const CreditNoteCreateInput = z.strictObject({
  itemIds: z
    .array(Uuid)
    .min(1)
    .max(MAX_LINES_PER_INVOICE)
    .refine((ids) => new Set(ids).size === ids.length, 'must not name a line twice')
    .nullish(),
  date: CalendarDate.nullish(),
  memo: z.string().max(400).nullish(),
});
export type CreditNoteCreateInput = z.infer<typeof CreditNoteCreateInput>;

export const InvoiceFilter = z
  .strictObject({
    customerId: Uuid.nullish(),
    type: z.enum(INVOICE_TYPES).nullish(),
    status: z.enum(INVOICE_STATUSES).nullish(),
    settlementStatus: z.enum(SETTLEMENT_STATUSES).nullish(),
    dateFrom: CalendarDate.nullish(),
    dateTo: CalendarDate.nullish(),
    overdue: z.boolean().nullish(),
  })
  .refine((filter) => !filter.dateFrom || !filter.dateTo || filter.dateFrom <= filter.dateTo, {
    path: ['dateTo'],
    message: 'must not be before dateFrom',
  });
export type InvoiceFilter = z.infer<typeof InvoiceFilter>;

/**
 * A number prefix. It may not end with a digit, so that no two prefixes can yield the same number
 * ("A1" + "000001" and "A" + "1000001" would).
 */
export const InvoiceNumberingInput = z
  .strictObject({
    prefix: z
      .string()
      .regex(
        /^[A-Za-z0-9._/-]{0,19}[A-Za-z._/-]$/,
        'must be 1 to 20 letters, digits or . _ / -, and must not end with a digit',
      )
      .nullish(),
    /** Checked by the numbering service, which answers coded errors (UNKNOWN_TOKEN, ...). */
    pattern: z.string().nullish(),
    yearlyReset: z.boolean().nullish(),
  })
  .refine((input) => input.prefix == null || input.pattern == null, {
    message: 'give a prefix or a pattern, not both',
    path: ['pattern'],
  });
export type InvoiceNumberingInput = z.infer<typeof InvoiceNumberingInput>;
