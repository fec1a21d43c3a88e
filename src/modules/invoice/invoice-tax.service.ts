import type { EntityManager } from '@mikro-orm/postgresql';
import { EnvironmentSchema, type TaxRounding } from '../../auth/environment.entity.ts';
import type { ServiceContext } from '../../context.ts';
import { columnsOf, leanFind, leanRowOf, leanSelect, tableOf } from '../../db/lean.ts';
import { cachedRead, customerReadKey } from '../../db/read-cache.ts';
import { DomainError, type FieldPath } from '../../errors.ts';
import { type Customer, CustomerSchema } from '../customer/customer.entity.ts';
import { customerLoaders } from '../customer/customer.reads.ts';
import { TaxCodeSchema } from '../tax/tax-code.entity.ts';
import type { TaxExempt } from '../tax/tax-policy.ts';
import { InvoiceArithmeticError, settlementStatus } from './invoice.arithmetic.ts';
import { type ItemFields, totalsOf } from './invoice.change.ts';
import { type Invoice, InvoiceItemSchema } from './invoice.entity.ts';
import { computeTaxedLines } from './invoice.tax.ts';

/** What a draft's tax is computed with: the environment's rounding and the customer's exemption now. */
export type TaxPolicy = { taxRounding: TaxRounding; taxExempt: TaxExempt };

export async function taxPolicyOf(
  ctx: ServiceContext,
  em: EntityManager,
  customer: Pick<Customer, 'taxExempt'>,
): Promise<TaxPolicy> {
  const environment = await cachedRead(`environment:${ctx.environmentId}`, () =>
    em.findOneOrFail(EnvironmentSchema, { id: ctx.environmentId }),
  );
  return { taxRounding: environment.taxRounding, taxExempt: customer.taxExempt };
}

/**
 * The customer `customerId` of the context's environment (null: none has it) with the environment's tax
 * rounding and the rates of `taxCodes` (those that exist), in one statement: what a draft's creation
 * reads. The customer is primed in the request's customer loader, as if read through it.
 */
export async function customerWithTaxRounding(
  ctx: ServiceContext,
  customerId: string,
  taxCodes: readonly string[] = [],
): Promise<{ customer: Customer; taxRounding: TaxRounding; taxRates: Map<string, string> } | null> {
  const { em, environmentId } = ctx;
  const customerOf = leanRowOf(em, CustomerSchema);
  const table = tableOf(em, CustomerSchema);
  const environment = tableOf(em, EnvironmentSchema);
  const taxCode = tableOf(em, TaxCodeSchema);
  const [found] = await leanSelect(
    em,
    CustomerSchema,
    { id: customerId, environmentId },
    {
      // The codes as one JSON array: one placeholder, however many codes. Rates as text, as pg reads a
      // numeric column.
      select: `${columnsOf(em, CustomerSchema)}, (select ${environment}.tax_rounding from ${environment}
        where ${environment}.id = ${table}.environment_id) as environment_tax_rounding,
        (select coalesce(json_object_agg(${taxCode}.code, ${taxCode}.rate::text), '{}') from ${taxCode}
        where ${taxCode}.environment_id = ${table}.environment_id
        and ${taxCode}.code in (select jsonb_array_elements_text(?::jsonb))) as tax_rates`,
      selectParams: [JSON.stringify(taxCodes)],
    },
    ({ environment_tax_rounding: taxRounding, tax_rates: taxRates, ...row }) => ({
      customer: customerOf(row) as Customer,
      taxRounding: taxRounding as TaxRounding,
      taxRates: new Map(Object.entries(taxRates as Record<string, string>)),
    }),
  );
  if (found) ctx.loaders.of(customerLoaders).byId.prime(customerId, found.customer);
  return found ?? null;
}

/**
 * Sets every line's `amount` and `taxAmount` under `policy` (docs/tax.md). An exempt or reverse-charge
 * customer's taxable lines carry 0 %; their tax code stays, naming the category the line would have.
 */
export function applyTaxPolicy(items: ItemFields[], policy: TaxPolicy, path: FieldPath): void {
  if (policy.taxExempt !== 'none') {
    for (const item of items) if (item.taxCode) item.taxRate = '0';
  }
  try {
    const amounts = computeTaxedLines(
      items.map((item) => ({
        quantity: item.quantity,
        unitAmount: item.unitAmount,
        discountPercentage: item.discountPercentage,
        discountAmount: item.discountAmount,
        taxRate: item.taxRate ?? null,
        taxCode: item.taxCode ?? null,
        taxBehavior: item.taxBehavior,
      })),
      policy.taxRounding,
    );
    items.forEach((item, index) => {
      Object.assign(item, amounts[index]);
    });
  } catch (error) {
    if (!(error instanceof InvoiceArithmeticError)) throw error;
    throw DomainError.onField('INVALID_INPUT', path, error.message);
  }
}

/** The policy a draft of `invoice`'s customer is computed with now. */
export async function currentTaxPolicy(
  ctx: ServiceContext,
  tx: EntityManager,
  invoice: Invoice,
): Promise<TaxPolicy> {
  const customer = await cachedRead(customerReadKey(ctx.environmentId, invoice.customerId), () =>
    tx.findOneOrFail(CustomerSchema, { id: invoice.customerId, environmentId: ctx.environmentId }),
  );
  return taxPolicyOf(ctx, tx, customer);
}

/**
 * Recomputes a draft invoice's lines and totals with the environment's rounding and the customer's
 * exemption as they are now. A customer no longer exempt gets its lines' rates back from their tax
 * codes (a code deleted since keeps the line at 0 %).
 */
export async function retaxDraft(
  ctx: ServiceContext,
  tx: EntityManager,
  invoice: Invoice,
  items: ItemFields[],
  policy?: TaxPolicy,
): Promise<void> {
  const current = policy ?? (await currentTaxPolicy(ctx, tx, invoice));
  if (current.taxExempt === 'none' && invoice.taxExempt !== 'none') {
    const codes = [...new Set(items.flatMap((item) => (item.taxCode ? [item.taxCode] : [])))];
    const taxCodes = codes.length
      ? await leanFind(tx, TaxCodeSchema, { environmentId: ctx.environmentId, code: codes })
      : [];
    const rateByCode = new Map(taxCodes.map((taxCode) => [taxCode.code, taxCode.rate]));
    for (const item of items) if (item.taxCode) item.taxRate = rateByCode.get(item.taxCode) ?? item.taxRate;
  }
  applyTaxPolicy(items, current, []);
  Object.assign(invoice, current, totalsOf(items, []));
  invoice.settlementStatus = settlementStatus(invoice.totalInclVat, invoice.settledAmount);
}

/**
 * Before a draft is booked: its amounts follow the policy in force now. Drafts are recomputed
 * whenever their lines change, so the lines are read again only when the policy changed since.
 */
export async function retaxForBooking(
  ctx: ServiceContext,
  tx: EntityManager,
  invoice: Invoice,
): Promise<void> {
  const policy = await currentTaxPolicy(ctx, tx, invoice);
  if (invoice.taxRounding === policy.taxRounding && invoice.taxExempt === policy.taxExempt) return;
  const items = await tx.find(InvoiceItemSchema, { invoiceId: invoice.id, environmentId: ctx.environmentId });
  await retaxDraft(ctx, tx, invoice, items, policy);
}
