import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp, TestEnvironment } from '../support/harness.ts';

/** A tenant environment whose every name, handle and code carries `marker`, so a leak is easy to spot. */
export type MarkedEnvironment = TestEnvironment & { marker: string };

/** The kinds of object a request can name; each factory makes a new one and returns how it is named. */
export type Target =
  | 'customer'
  | 'product'
  | 'productHandle'
  | 'taxCode'
  | 'taxCodeId'
  | 'price'
  | 'ledgerAccount'
  | 'accountSet'
  | 'draftInvoice'
  | 'invoiceItem'
  | 'bookedInvoice';

/** One object of each kind, made once per environment and left alone (requests naming them must fail or not write). */
export type Shared = Record<Target, string>;

export const INVOICE_DATE = '2026-03-01';

/** Builds environments through the API, the way clients fill them, with rows in every tenant table. */
export function tenantFixtures(t: TestApp) {
  let counter = 0;
  const next = () => ++counter;

  /** Runs `<name>(...)` and returns its payload's object, failing on any userError. */
  async function mutate(
    env: TestEnvironment,
    name: string,
    signature: string,
    args: string,
    object: string,
    selection: string,
    variables: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) {
    const response = await t.graphql(
      `mutation (${signature}) { ${name}(${args}) { ${object} { ${selection} } userErrors { field message code } } }`,
      variables,
      { env, headers },
    );
    expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
    const payload = response.body.data[name];
    expect(payload.userErrors, `${name}: ${JSON.stringify(payload.userErrors)}`).toEqual([]);
    return payload[object];
  }

  async function createTaxCode(env: MarkedEnvironment) {
    const input = { code: `VAT-${env.marker}-${next()}`, rate: 25, description: `Tax ${env.marker}` };
    return mutate(
      env,
      'taxCodeCreate',
      '$input: TaxCodeCreateInput!',
      'input: $input',
      'taxCode',
      'id code',
      {
        input,
      },
    ) as Promise<{ id: string; code: string }>;
  }

  async function createProduct(env: MarkedEnvironment) {
    const n = next();
    const input = {
      name: `Product ${env.marker}`,
      handle: `sku-${env.marker}-${n}`,
      description: env.marker,
    };
    return mutate(
      env,
      'productCreate',
      '$input: ProductCreateInput!',
      'input: $input',
      'product',
      'id handle',
      {
        input,
      },
    ) as Promise<{ id: string; handle: string }>;
  }

  async function createCustomer(env: MarkedEnvironment, headers: Record<string, string> = {}) {
    const input = {
      name: `Customer ${env.marker}`,
      handle: `cus-${env.marker}-${next()}`,
      currency: 'EUR',
      paymentTerm: 'net14',
      billingAddress: { city: `City ${env.marker}` },
    };
    const customer = await mutate(
      env,
      'customerCreate',
      '$input: CustomerCreateInput!',
      'input: $input',
      'customer',
      'id',
      { input },
      headers,
    );
    return customer.id as string;
  }

  async function createLedgerAccount(env: MarkedEnvironment) {
    const input = { name: `Account ${env.marker}`, accountingCode: `${env.marker}-${next()}` };
    const account = await mutate(
      env,
      'ledgerAccountCreate',
      '$input: LedgerAccountCreateInput!',
      'input: $input',
      'ledgerAccount',
      'id',
      { input },
    );
    return account.id as string;
  }

  async function createAccountSet(env: MarkedEnvironment) {
    const [sales, income, tax, deferral] = [
      await createLedgerAccount(env),
      await createLedgerAccount(env),
      await createLedgerAccount(env),
      await createLedgerAccount(env),
    ];
    const response = await t.rest('POST', '/accountsets', {
      env,
      body: {
        name: `Set ${env.marker}`,
        salesAccountId: sales,
        incomeAccountId: income,
        taxAccountId: tax,
        deferralAccountId: deferral,
      },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body.id as string;
  }

  async function createPrice(env: MarkedEnvironment) {
    const response = await t.rest('POST', '/prices', { env, body: priceBody(env) });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body.id as string;
  }

  /** A draft with one line; returns the invoice and its item. */
  async function createDraft(env: MarkedEnvironment, customerId: string) {
    const response = await t.rest('POST', '/invoices', {
      env,
      body: {
        customerId,
        currency: 'EUR',
        date: INVOICE_DATE,
        memo: `Memo ${env.marker}`,
        items: [{ quantity: 2, unitAmount: 1000, title: `Line ${env.marker}` }],
      },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return { id: response.body.id as string, itemId: response.body.items[0].id as string };
  }

  async function book(env: MarkedEnvironment, id: string) {
    await mutate(env, 'invoiceBook', '$id: UUID!', 'id: $id', 'invoice', 'id', { id });
  }

  /**
   * Fills `env` with one object of each kind (rows in every tenant table: a booked and partly settled
   * invoice, a booked credit note, an idempotency key, the numbering, the audit trail) and returns them.
   */
  async function populate(env: MarkedEnvironment): Promise<Shared> {
    const taxCode = await createTaxCode(env);
    const product = await createProduct(env);
    const customer = await createCustomer(env, { 'idempotency-key': `populate-${env.marker}` });
    const draft = await createDraft(env, customer);
    const booked = await createDraft(env, customer);
    await book(env, booked.id);
    await mutate(
      env,
      'invoiceSettle',
      '$id: UUID!, $input: InvoiceSettleInput!',
      'id: $id, input: $input',
      'invoice',
      'id',
      { id: booked.id, input: { amount: 500, date: INVOICE_DATE, reference: `Pay ${env.marker}` } },
    );
    const credited = await createDraft(env, customer);
    await book(env, credited.id);
    const creditNote = await mutate(
      env,
      'creditNoteCreate',
      '$invoiceId: UUID!',
      'invoiceId: $invoiceId',
      'creditNote',
      'id',
      { invoiceId: credited.id },
    );
    await book(env, creditNote.id);
    return {
      customer,
      product: product.id,
      productHandle: product.handle,
      taxCode: taxCode.code,
      taxCodeId: taxCode.id,
      price: await createPrice(env),
      ledgerAccount: await createLedgerAccount(env),
      accountSet: await createAccountSet(env),
      draftInvoice: draft.id,
      invoiceItem: draft.itemId,
      bookedInvoice: booked.id,
    };
  }

  /** A new object of `kind` in `env`, for a request that may change or consume it. */
  async function create(kind: Target, env: MarkedEnvironment, shared: Shared): Promise<string> {
    switch (kind) {
      case 'customer':
        return createCustomer(env);
      case 'product':
        return (await createProduct(env)).id;
      case 'productHandle':
        return (await createProduct(env)).handle;
      case 'taxCode':
        return (await createTaxCode(env)).code;
      case 'taxCodeId':
        return (await createTaxCode(env)).id;
      case 'price':
        return createPrice(env);
      case 'ledgerAccount':
        return createLedgerAccount(env);
      case 'accountSet':
        return createAccountSet(env);
      case 'draftInvoice':
        return (await createDraft(env, shared.customer)).id;
      case 'invoiceItem':
        return (await createDraft(env, shared.customer)).itemId;
      case 'bookedInvoice': {
        const { id } = await createDraft(env, shared.customer);
        await book(env, id);
        return id;
      }
    }
  }

  async function createEnvironment(name: string): Promise<MarkedEnvironment> {
    const env = await t.createEnvironment(name);
    return { ...env, marker: `mk${randomBytes(4).toString('hex')}` };
  }

  return { createEnvironment, populate, create };
}

export const priceBody = (env: MarkedEnvironment) => ({
  name: `Price ${env.marker}`,
  description: env.marker,
  termUnit: 'month',
  termCount: 1,
  purchase: 'recurring',
  priceModel: 'fee',
  method: 'advance',
  pricing: { eur: { amount: 1999 } },
});

/** Every table that holds tenant rows: those with an environment_id column. */
export async function tenantTables(t: TestApp): Promise<string[]> {
  const rows = await t.sql<{ table_name: string }>(
    `select c.table_name from information_schema.columns c
     join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
     where c.table_schema = 'public' and c.column_name = 'environment_id' and t.table_type = 'BASE TABLE'
     order by c.table_name`,
  );
  return rows.map((row) => row.table_name);
}
