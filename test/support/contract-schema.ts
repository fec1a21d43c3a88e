/**
 * The interface contract's response shapes (seeds: sections 2.1 to 2.10), transcribed as JSON Schema
 * field by field, independent of the server's own schemas. Where the service knowingly sends something
 * else, the field is wrapped in `deviation(...)`: DEVIATIONS lists them all, and docs/rest.md explains
 * each. Every REST response of a contract operation is validated against this (see ContractChecker), so
 * any other difference fails the suite.
 */

type Schema = Record<string, unknown>;

const string: Schema = { type: 'string' };
const uuid: Schema = { type: 'string', format: 'uuid' };
const date: Schema = { type: 'string', format: 'date' };
const dateTime: Schema = { type: 'string', format: 'date-time' };
const number: Schema = { type: 'number' };
const integer: Schema = { type: 'integer' };
const boolean: Schema = { type: 'boolean' };
const orNull = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
const enumOf = (...values: string[]): Schema => ({ enum: values });
const arrayOf = (items: Schema): Schema => ({ type: 'array', items });

/** Every field listed, none other. The contract marks no field optional in a response. */
const object = (properties: Record<string, Schema>): Schema => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

export const DEVIATIONS: string[] = [];

/** A field sent as null when it has no value, where the contract types a plain value. */
function deviation(where: string, schema: Schema): Schema {
  DEVIATIONS.push(where);
  return orNull(schema);
}

const billingAddress = (owner: string) =>
  object(
    Object.fromEntries(
      ['street1', 'street2', 'postalCode', 'city', 'county', 'country', 'state'].map((field) => [
        field,
        deviation(`${owner}.billingAddress.${field}`, string),
      ]),
    ),
  );

/** 2.3 */
const invoiceItem = object({
  id: uuid,
  quantity: number,
  unitAmount: number,
  sku: deviation('invoice.items[].sku', string),
  title: string,
  description: deviation('invoice.items[].description', string),
  periodStart: deviation('invoice.items[].periodStart', date),
  periodEnd: deviation('invoice.items[].periodEnd', date),
  amount: number,
  taxAmount: number,
  tax: object({
    taxable: boolean,
    taxCode: deviation('invoice.items[].tax.taxCode', string),
    taxRate: deviation('invoice.items[].tax.taxRate', number),
  }),
  discount: object({ percentage: number, amount: number }),
});

/** 2.4 */
const settlement = object({
  date,
  amount: number,
  reference: deviation('invoice.settlements[].reference', string),
  note: deviation('invoice.settlements[].note', string),
});

/** 2.1 with 2.2 embedded */
const invoice = object({
  id: uuid,
  handle: orNull(string),
  type: enumOf('invoice', 'credit_note'),
  status: enumOf('draft', 'booked'),
  settlementStatus: enumOf('settled', 'over_settled', 'under_settled', 'not_settled'),
  currency: orNull(string),
  createdAt: dateTime,
  updatedAt: orNull(dateTime),
  customer: object({
    id: uuid,
    handle: deviation('invoice.customer.handle', string),
    name: string,
    billingAddress: billingAddress('invoice.customer'),
  }),
  memo: orNull(string),
  date,
  dueDate: orNull(date),
  items: orNull(arrayOf(invoiceItem)),
  settlements: orNull(arrayOf(settlement)),
  totalExclVat: integer,
  totalVat: integer,
  totalInclVat: integer,
  totalDue: integer,
});

/** 2.6 */
const customer = object({
  id: uuid,
  name: orNull(string),
  handle: orNull(string),
  createdAt: dateTime,
  updatedAt: orNull(dateTime),
  billingAddress: billingAddress('customer'),
  paymentTerm: orNull(string),
  email: orNull(string),
  currency: orNull(string),
  collectionMode: enumOf('automatic', 'send_invoice', 'draft_invoice'),
});

/** 2.7 */
const account = object({ id: uuid, name: string, accountingCode: string, barred: boolean });
const accountSet = object({
  id: uuid,
  name: orNull(string),
  salesAccount: account,
  taxAccount: account,
  incomeAccount: account,
  deferralAccount: account,
  revenueRecognitionStrategy: enumOf('none', 'even_distribution', 'exact_daily_accrual', 'daily_accrual'),
});

/** 2.8 (the response carries no `method`) */
const price = object({
  id: uuid,
  name: orNull(string),
  description: orNull(string),
  priceModel: enumOf('fee', 'volume', 'graduated', 'package'),
  purchase: enumOf('one_time', 'recurring'),
  termCount: integer,
  termUnit: enumOf('day', 'week', 'month', 'year'),
  pricing: { type: 'object' },
});

/** 2.9 */
const product = object({
  id: uuid,
  name: orNull(string),
  handle: orNull(string),
  description: orNull(string),
  taxCode: orNull(string),
  createdAt: dateTime,
  updatedAt: orNull(dateTime),
});

/** 2.10 */
const reference = object({ id: uuid, name: string });
const subscription = object({
  id: uuid,
  handle: orNull(string),
  currency: string,
  term: object({ start: date, end: deviation('subscription.term.end', date) }),
  autoRenewal: boolean,
  items: orNull(
    arrayOf(
      object({
        id: uuid,
        billAt: dateTime,
        period: object({ start: date, end: date }),
        quantity: number,
        product: reference,
        price: reference,
      }),
    ),
  ),
  createdAt: dateTime,
});

/** The success body of each contract operation (section 4), by `METHOD /path template`. */
export const CONTRACT_RESPONSES: Record<string, Schema> = {
  'POST /invoices': invoice,
  'GET /invoices/{invoiceId}': invoice,
  'PATCH /customers/{customerId}': customer,
  'GET /customers/{customerId}': customer,
  'POST /accountsets': accountSet,
  'GET /subscriptions/{subscriptionId}': subscription,
  'POST /prices': price,
  // The contract shows no success body for the price update; it answers the price as POST does.
  'PUT /prices/{priceId}': price,
  'PATCH /products/{productId}': product,
};
