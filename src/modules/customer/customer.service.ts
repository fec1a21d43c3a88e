import type { FilterQuery } from '@mikro-orm/core';
import { AccessService } from '../../auth/access.service.ts';
import type { ServiceContext } from '../../context.ts';
import { changedFields } from '../../db/changes.ts';
import { type ConstraintErrors, flushOrFail } from '../../db/flush.ts';
import { leanFind } from '../../db/lean.ts';
import { loadOrNotFound } from '../../db/loaders.ts';
import { type Connection, containing, keysetPage, type PageArgs, type Sort } from '../../db/pagination.ts';
import { DomainError } from '../../errors.ts';
import { TestClockService } from '../clock/clock.service.ts';
import { type EventInput, recordEvent, writeChange } from '../event/event.service.ts';
import { customerTaxIdentity } from '../tax/tax-identity.ts';
import {
  BILLING_ADDRESS_FIELDS,
  type BillingAddress,
  type Customer,
  CustomerSchema,
} from './customer.entity.ts';
import type { CustomerCreateInput, CustomerUpdateInput } from './customer.input.ts';
import { customerLoaders } from './customer.reads.ts';
import { type CustomerAnswer, customerResponse } from './customer.rest.ts';

/** Narrows a list of customers; every condition given must hold. */
export type CustomerFilter = {
  /** Part of the name, company name, handle or e-mail address, in any case. */
  search?: string | null;
  /** Preferred currency (ISO 4217, either case). */
  currency?: string | null;
};

const emptyAddress = (): BillingAddress =>
  Object.fromEntries(BILLING_ADDRESS_FIELDS.map((field) => [field, null])) as BillingAddress;

/** As CustomerService.toBill, for a customer read already (null: none of this environment has the id). */
export function billable(
  customer: Customer | null,
  currency: string | null | undefined,
): { customer: Customer; currency: string } {
  if (!customer) {
    throw DomainError.onField(
      'INVALID_REFERENCE',
      ['customerId'],
      'no customer of this environment has this id',
    );
  }
  const billedIn = currency ?? customer.currency;
  if (!billedIn) {
    throw DomainError.onField(
      'INVALID_REFERENCE',
      ['currency'],
      'is required: the customer has no preferred currency to fall back to',
    );
  }
  return { customer, currency: billedIn };
}

/** Customers of one environment: the rules both the GraphQL and the REST face go through. */
export class CustomerService {
  private readonly ctx: ServiceContext;

  constructor(ctx: ServiceContext) {
    this.ctx = ctx;
  }

  get(id: string): Promise<Readonly<Customer>> {
    return loadOrNotFound(this.ctx.loaders.of(customerLoaders).byId, 'Customer', id);
  }

  /**
   * The customer a new invoice or subscription is for, and the currency it is billed in: the one asked
   * for, or else the customer's preferred one. INVALID_REFERENCE names the field that is wrong.
   */
  async toBill(
    customerId: string,
    currency: string | null | undefined,
  ): Promise<{ customer: Customer; currency: string }> {
    return billable(await this.ctx.loaders.of(customerLoaders).byId.load(customerId), currency);
  }

  /** The customer whose handle this is, or null when the environment has none. */
  findByHandle(handle: string): Promise<Customer | null> {
    return this.ctx.em.findOne(CustomerSchema, { environmentId: this.ctx.environmentId, handle });
  }

  list(page: PageArgs, filter: CustomerFilter = {}, sort?: Sort<Customer>): Promise<Connection<Customer>> {
    const where: FilterQuery<Customer>[] = [{ environmentId: this.ctx.environmentId }];
    if (filter.currency) where.push({ currency: filter.currency.toUpperCase() });
    if (filter.search) {
      const pattern = containing(filter.search);
      where.push({
        $or: [
          { name: { $ilike: pattern } },
          { companyName: { $ilike: pattern } },
          { handle: { $ilike: pattern } },
          { email: { $ilike: pattern } },
        ],
      });
    }
    return keysetPage(this.ctx.em, CustomerSchema, { $and: where }, page, sort);
  }

  async create(input: CustomerCreateInput): Promise<Customer> {
    const timezone =
      input.timezone ?? (await new AccessService(this.ctx.em).environment(this.ctx.environmentId)).timezone;
    const testClockId = input.testClockId ? await this.testClock(input.testClockId) : null;
    const customer = this.ctx.em.create(CustomerSchema, {
      environmentId: this.ctx.environmentId,
      name: input.name,
      companyName: input.companyName ?? null,
      handle: input.handle ?? null,
      email: input.email ?? null,
      currency: input.currency ?? null,
      paymentTerm: input.paymentTerm ?? null,
      collectionMode: input.collectionMode,
      billingAddress: { ...emptyAddress(), ...input.billingAddress },
      ...customerTaxIdentity({ taxIds: [], taxExempt: 'none' }, input),
      timezone,
      testClockId,
    });
    this.recordEvent('customer.created', customer);
    await this.flush();
    return customer;
  }

  /**
   * The test clock a new customer is attached to: only in a test environment
   * (TEST_CLOCK_LIVE_ENVIRONMENT), an existing clock of it (INVALID_REFERENCE).
   */
  private async testClock(id: string): Promise<string> {
    await new TestClockService(this.ctx).assertTestEnvironment();
    const clock = await new TestClockService(this.ctx).find(id);
    if (!clock) {
      throw DomainError.onField(
        'INVALID_REFERENCE',
        ['testClockId'],
        'is not a test clock of this environment',
      );
    }
    return clock.id;
  }

  /** Applies the fields present in `input`; `null` clears a field, an absent one stays. */
  async update(id: string, input: CustomerUpdateInput): Promise<Customer> {
    return (await this.updateAnswered(id, input)).customer;
  }

  /**
   * update, with the customer as its REST answer shows it: when it changed, the very object its
   * `customer.updated` event carries (built once).
   */
  async updateAnswered(
    id: string,
    input: CustomerUpdateInput,
  ): Promise<{ customer: Customer; answer: CustomerAnswer }> {
    const { em, environmentId } = this.ctx;
    // A lean read and write (writeChange, with the audit event and the event): no unit of work.
    const [row] = await leanFind(em, CustomerSchema, { id, environmentId });
    if (!row) throw DomainError.notFound('Customer', id);
    const customer = { ...row } as Customer;
    const { billingAddress, taxIds, taxExempt, ...fields } = input;
    const set = changedFields(customer, {
      ...fields,
      ...customerTaxIdentity(customer, { taxIds, taxExempt }),
      billingAddress: billingAddress === undefined ? undefined : { ...emptyAddress(), ...billingAddress },
    } as Partial<Customer>);
    if (Object.keys(set).length === 0) return { customer, answer: customerResponse(customer) };
    customer.updatedAt = new Date();
    const answer = customerResponse(customer);
    await writeChange(
      em,
      environmentId,
      {
        updated: [{ entity: CustomerSchema, key: customer, set: { ...set, updatedAt: customer.updatedAt } }],
        events: [this.event('customer.updated', answer)],
      },
      DUPLICATE_HANDLE,
    );
    // Later reads of this request see what was written.
    this.ctx.loaders.forget(customerLoaders);
    this.ctx.loaders.of(customerLoaders).byId.prime(id, customer);
    return { customer, answer };
  }

  private event(type: 'customer.created' | 'customer.updated', answer: CustomerAnswer): EventInput {
    return { type, objectType: 'customer', objectId: answer.id, data: answer };
  }

  private recordEvent(type: 'customer.created' | 'customer.updated', customer: Customer): void {
    recordEvent(this.ctx.em, this.ctx.environmentId, this.event(type, customerResponse(customer)));
  }

  private flush(): Promise<void> {
    return flushOrFail(this.ctx.em, DUPLICATE_HANDLE);
  }
}

const DUPLICATE_HANDLE: ConstraintErrors = {
  unique: () =>
    DomainError.onField('DUPLICATE', ['handle'], 'another customer of this environment has this handle'),
};
