import pg from 'pg';
import { AccessService } from '../src/auth/access.service.ts';
import { createRequestContext, type RequestContext } from '../src/context.ts';
import type { Orm } from '../src/db/orm.ts';
import { CustomerCreateInput } from '../src/modules/customer/customer.input.ts';
import { CustomerService } from '../src/modules/customer/customer.service.ts';
import {
  InvoiceCreateInput,
  MAX_LINES_PER_INVOICE,
  SettlementInput,
} from '../src/modules/invoice/invoice.input.ts';
import { InvoiceBookingService } from '../src/modules/invoice/invoice-booking.service.ts';
import { InvoiceDraftService } from '../src/modules/invoice/invoice-drafts.service.ts';
import { InvoiceSettlementService } from '../src/modules/invoice/invoice-settlement.service.ts';
import { TaxCodeCreateInput } from '../src/modules/tax/tax-code.input.ts';
import { TaxCodeService } from '../src/modules/tax/tax-code.service.ts';
import { invoiceItems } from './scenarios.ts';

export type SeededData = {
  environmentId: string;
  token: string;
  customerIds: string[];
  /** In creation (and so id) order: the first 50 are the GraphQL page. */
  invoiceIds: string[];
};

export const SEED = { customers: 100, invoices: 300 } as const;

/**
 * One environment with a token, tax codes, customers and invoices, made through the services the API
 * calls (so every rule and audit event applies). Of the invoices, one in three stays a draft (shown
 * with the live customer) and the others are booked (with the customer frozen onto them); every
 * other booked invoice is partly settled.
 */
export async function seed(orm: Orm): Promise<SeededData> {
  const access = new AccessService(orm.em.fork());
  const environment = await access.createEnvironment('Benchmark');
  const { token, secret } = await access.createToken([environment.id], 'Benchmark');
  const context = (): RequestContext => createRequestContext(orm.em.fork(), environment.id, token);

  for (const [code, rate] of [
    ['VAT25', 25],
    ['VAT12', 12],
    ['VAT6', 6],
  ] as const) {
    await new TaxCodeService(context()).create(TaxCodeCreateInput.parse({ code, rate }));
  }

  const customerIds: string[] = [];
  for (let n = 0; n < SEED.customers; n++) {
    const customer = await new CustomerService(context()).create(
      CustomerCreateInput.parse({
        name: `Customer ${n}`,
        handle: `customer-${n}`,
        email: `billing@customer-${n}.example`,
        currency: 'EUR',
        paymentTerm: 'net30',
        billingAddress: { street1: `${n} Main Street`, postalCode: '1000', city: 'Brussels', country: 'BE' },
      }),
    );
    customerIds.push(customer.id);
  }

  const invoiceIds: string[] = [];
  for (let n = 0; n < SEED.invoices; n++) {
    const ctx = context();
    const invoice = await new InvoiceDraftService(ctx).create(
      InvoiceCreateInput.parse({
        customerId: customerIds[n % customerIds.length],
        currency: 'EUR',
        date: '2026-02-28',
        memo: `Seeded invoice ${n}`,
        items: invoiceItems(n),
      }),
    );
    invoiceIds.push(invoice.id);
    if (n % 3 === 0) continue;
    const booked = await new InvoiceBookingService(ctx).book(invoice.id);
    if (n % 2 === 0) {
      await new InvoiceSettlementService(ctx).settle(
        booked.id,
        SettlementInput.parse({ date: '2026-03-15', amount: 1000, reference: `PAY-${n}` }),
      );
    }
  }
  return { environmentId: environment.id, token: secret, customerIds, invoiceIds };
}

export type HeavyData = { environmentId: string; token: string; invoices: number; linesPerInvoice: number };

/**
 * For the memory scenario: a second environment (so the measured scenarios' data stay as they are) with
 * `invoices` draft invoices of MAX_LINES_PER_INVOICE lines each, the most an invoice may have. One is made
 * through the service; the others are copies of it made in SQL by the owner (its rows and lines under new
 * ids), which is quicker than a thousand validated lines each.
 */
export async function seedHeavy(orm: Orm, databaseUrl: string, invoices: number): Promise<HeavyData> {
  const access = new AccessService(orm.em.fork());
  const environment = await access.createEnvironment('Benchmark, largest invoices');
  const { token, secret } = await access.createToken([environment.id], 'Benchmark, largest invoices');
  const context = (): RequestContext => createRequestContext(orm.em.fork(), environment.id, token);
  const customer = await new CustomerService(context()).create(
    CustomerCreateInput.parse({ name: 'Large customer', currency: 'EUR' }),
  );
  const template = await new InvoiceDraftService(context()).create(
    InvoiceCreateInput.parse({
      customerId: customer.id,
      currency: 'EUR',
      date: '2026-02-28',
      items: Array.from({ length: MAX_LINES_PER_INVOICE }, (_, n) => ({
        quantity: 3,
        unitAmount: 1234,
        title: `Line ${n} with a title as long as a real one`,
      })),
    }),
  );
  const sql = new pg.Client({ connectionString: databaseUrl });
  await sql.connect();
  try {
    const columns = async (table: string) => {
      const { rows } = await sql.query<{ column_name: string }>(
        `select column_name from information_schema.columns where table_schema = 'public' and table_name = $1
         order by ordinal_position`,
        [table],
      );
      return rows.map((row) => row.column_name);
    };
    const copy = async (table: string, replace: Record<string, string>, where: string) => {
      const names = await columns(table);
      const values = names.map((name) => replace[name] ?? `t."${name}"`);
      await sql.query(
        `insert into ${table} (${names.map((name) => `"${name}"`).join(', ')})
         select ${values.join(', ')} from ${table} t, bench_copy c where ${where}`,
      );
    };
    await sql.query('begin');
    // Row-level security is forced on the owner too: the transaction names the environment.
    await sql.query(`select set_config('app.environment_id', $1, true)`, [environment.id]);
    await sql.query(
      'create temp table bench_copy on commit drop as select gen_random_uuid() as invoice_id from generate_series(1, $1::int)',
      [invoices - 1],
    );
    await copy('invoice', { id: 'c.invoice_id' }, `t.id = '${template.id}'`);
    await copy(
      'invoice_item',
      { id: 'gen_random_uuid()', invoice_id: 'c.invoice_id' },
      `t.invoice_id = '${template.id}'`,
    );
    await sql.query('commit');
    await sql.query('analyze invoice, invoice_item');
  } finally {
    await sql.end();
  }
  return { environmentId: environment.id, token: secret, invoices, linesPerInvoice: MAX_LINES_PER_INVOICE };
}
