import { z } from 'zod';
import { TimeZone } from '../../dates/zone.ts';
import { CurrencyCode } from '../../money/currency.ts';
import { TaxIdInput } from '../tax/tax-id.ts';
import { TAX_EXEMPTIONS } from '../tax/tax-policy.ts';
import { BILLING_ADDRESS_FIELDS, COLLECTION_MODES } from './customer.entity.ts';

const optionalText = (max: number) => z.string().trim().max(max).nullish();

export const BillingAddressInput = z.strictObject(
  Object.fromEntries(BILLING_ADDRESS_FIELDS.map((field) => [field, optionalText(250)])) as Record<
    (typeof BILLING_ADDRESS_FIELDS)[number],
    ReturnType<typeof optionalText>
  >,
);

/** Every writable customer field and its rules, declared once for both faces. */
const customerFields = {
  name: z.string().trim().min(1).max(250),
  companyName: optionalText(250),
  handle: z.string().trim().min(1).max(250).nullish(),
  // RFC 6531: internationalised addresses (jörg@bücher.de) are valid and deliverable over SMTPUTF8.
  email: z.email({ pattern: z.regexes.unicodeEmail }).max(320).nullish(),
  currency: CurrencyCode.nullish(),
  paymentTerm: z
    .string()
    .regex(/^net(0|[1-9]\d{0,2})$/, 'must be net<N>, N days from the invoice date (0 to 999)')
    .nullish(),
  collectionMode: z.enum(COLLECTION_MODES),
  billingAddress: BillingAddressInput.nullish(),
  /** GraphQL only: REST's customer stays as the contract has it. */
  taxIds: z.array(TaxIdInput).max(10).nullish(),
  taxExempt: z.enum(TAX_EXEMPTIONS).nullish(),
  timezone: TimeZone.optional(),
};

export const CustomerCreateInput = z.strictObject({
  ...customerFields,
  collectionMode: customerFields.collectionMode.default('send_invoice'),
  /** GraphQL only, test environments only: the test clock the customer lives on, for good. */
  testClockId: z.uuid().nullish(),
});
export type CustomerCreateInput = z.infer<typeof CustomerCreateInput>;

/** A partial update: an absent field stays as it is, `null` clears it. */
export const CustomerUpdateInput = z.strictObject({
  ...customerFields,
  name: customerFields.name.optional(),
  collectionMode: customerFields.collectionMode.optional(),
});
export type CustomerUpdateInput = z.infer<typeof CustomerUpdateInput>;

const beyondContract = 'Beyond the contract (which shows it in responses only): absent stays, null clears.';

/**
 * Body of `PATCH /customers/{id}`: the contract requires `name` and lists the first five fields. The
 * three it only shows in responses are accepted and applied too, so a client echoing a customer back
 * (or changing one of them) is never silently ignored; an invalid value is refused like any other.
 */
export const CustomerPatchBody = z.strictObject({
  name: customerFields.name,
  companyName: customerFields.companyName,
  handle: customerFields.handle,
  email: customerFields.email,
  currency: customerFields.currency,
  billingAddress: customerFields.billingAddress.meta({ description: beyondContract }),
  paymentTerm: customerFields.paymentTerm.meta({ description: beyondContract }),
  collectionMode: customerFields.collectionMode
    .optional()
    .meta({ description: 'Beyond the contract (which shows it in responses only): absent stays.' }),
});

/**
 * Body of `POST /customers` (beyond the contract): the fields the customer response shows, `name`
 * required; tax ids, exemption and time zone are set through GraphQL.
 */
export const CustomerCreateBody = z.strictObject({
  name: customerFields.name,
  companyName: customerFields.companyName,
  handle: customerFields.handle,
  email: customerFields.email,
  currency: customerFields.currency,
  billingAddress: customerFields.billingAddress,
  paymentTerm: customerFields.paymentTerm,
  collectionMode: customerFields.collectionMode.default('send_invoice'),
});

/** Fields of the customer response that clients may echo back; they are ignored as input. */
export const CUSTOMER_READ_ONLY_FIELDS = ['id', 'createdAt', 'updatedAt'] as const;
