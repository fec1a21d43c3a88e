import { AccessService } from '../src/auth/access.service.ts';
import { createRequestContext, type RequestContext } from '../src/context.ts';
import type { Orm } from '../src/db/orm.ts';
import { CustomerCreateInput } from '../src/modules/customer/customer.input.ts';
import { CustomerService } from '../src/modules/customer/customer.service.ts';
import { InvoiceCreateInput, SettlementInput } from '../src/modules/invoice/invoice.input.ts';
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
