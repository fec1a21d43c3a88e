import { z } from 'zod';
import { SUPPORTED_CURRENCIES } from '../../money/currency.ts';
import { Decimal } from '../../money/decimal.ts';
import { boundedText, fieldIssues } from '../../validation.ts';
import { TAX_BEHAVIORS } from '../tax/tax-policy.ts';
import { BILLING_METHODS, PRICE_MODELS, type PriceModel, PURCHASES, TERM_UNITS } from './price.entity.ts';
import type { FeeEntry, PackageEntry, PricingEntry, TieredEntry } from './pricing.ts';

/** Per-unit amounts may carry fractions of a minor unit, up to this many decimal places. */
const UNIT_AMOUNT_DECIMALS = 12;

const notNegative = z
  .number()
  .nonnegative({ error: 'must not be negative' })
  .max(Number.MAX_SAFE_INTEGER, { error: 'is too large' });

/** A whole number of minor units (a flat or package amount). */
const wholeAmount = notNegative.refine(Number.isInteger, { error: 'must be a whole number of minor units' });

/** An amount per unit, in minor units, possibly fractional (0.25 = a quarter cent per unit). */
const unitAmount = notNegative.refine((value) => new Decimal(value).decimalPlaces() <= UNIT_AMOUNT_DECIMALS, {
  error: `must have at most ${UNIT_AMOUNT_DECIMALS} decimal places`,
});

const positiveInteger = z
  .int({ error: 'must be a positive integer' })
  .positive({ error: 'must be a positive integer' });

const FeeEntryInput = z.strictObject({ amount: unitAmount }) satisfies z.ZodType<FeeEntry>;

const TierInput = z.strictObject({
  upTo: positiveInteger.nullable(),
  unitAmount,
  flatAmount: wholeAmount.optional(),
});

const TieredEntryInput = z
  .strictObject({ tiers: z.array(TierInput).min(1, { error: 'must list at least one tier' }).max(100) })
  .superRefine(({ tiers }, ctx) => {
    tiers.forEach((tier, index) => {
      const issue = (message: string) =>
        ctx.addIssue({ code: 'custom', path: ['tiers', index, 'upTo'], message });
      const previous = tiers[index - 1]?.upTo;
      const last = index === tiers.length - 1;
      if (tier.upTo === null && !last) issue('only the last tier may be unbounded (null)');
      if (tier.upTo !== null && last) issue('the last tier must be unbounded: upTo null');
      if (tier.upTo !== null && previous != null && tier.upTo <= previous) {
        issue(`must be greater than the previous tier's upTo (${previous}): tiers ascend strictly`);
      }
    });
  }) satisfies z.ZodType<TieredEntry>;

const PackageEntryInput = z.strictObject({
  amount: wholeAmount,
  packageSize: positiveInteger,
}) satisfies z.ZodType<PackageEntry>;

/** The shape of one `pricing` entry under each price model (DESIGN §7). */
const PRICING_ENTRY_INPUTS: Record<PriceModel, z.ZodType<PricingEntry>> = {
  fee: FeeEntryInput,
  volume: TieredEntryInput,
  graduated: TieredEntryInput,
  package: PackageEntryInput,
};

/** Why `key` cannot key a pricing entry, or undefined when it can. */
function currencyKeyProblem(key: string): string | undefined {
  const code = key.toUpperCase();
  const supported = SUPPORTED_CURRENCIES.has(code);
  if (supported && key === code.toLowerCase()) return undefined;
  if (supported)
    return `${JSON.stringify(key)} must be written in lowercase: ${JSON.stringify(code.toLowerCase())}`;
  return `${JSON.stringify(key)} is not a lowercase ISO 4217 code of a supported currency`;
}

/**
 * `pricing` keys: lowercase ISO 4217 codes of supported currencies. The entries' shape depends on
 * `priceModel`, so the price object checks them (below); here each key is checked on its own.
 */
const PricingEntryAny = z.custom<PricingEntry>().meta({
  description: 'fee: { amount }; volume and graduated: { tiers }; package: { amount, packageSize }',
  override: {
    oneOf: [FeeEntryInput, TieredEntryInput, PackageEntryInput].map(
      (schema) =>
        // zod's JSON Schema type and zod-openapi's differ only in optional `$ref`; the value is plain JSON Schema.
        z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { type: 'object' },
    ),
  },
});

const PricingInput = z
  .record(z.string(), PricingEntryAny)
  .superRefine((pricing, ctx) => {
    for (const key of Object.keys(pricing)) {
      const message = currencyKeyProblem(key);
      if (message) ctx.addIssue({ code: 'custom', path: [key], message });
    }
  })
  .meta({
    description: 'One entry per currency, keyed by its lowercase ISO 4217 code (eur, usd, jpy, …)',
    propertyNames: { pattern: '^[a-z]{3}$' },
  });

/** Checks every pricing entry against the shape its price model gives it. */
function checkPricingEntries(
  price: { priceModel: PriceModel; pricing?: Record<string, unknown> | null },
  ctx: z.RefinementCtx,
): void {
  const entryInput = PRICING_ENTRY_INPUTS[price.priceModel];
  for (const [currency, entry] of Object.entries(price.pricing ?? {})) {
    for (const issue of fieldIssues(entryInput.safeParse(entry).error?.issues ?? [])) {
      ctx.addIssue({ code: 'custom', path: ['pricing', currency, ...issue.path], message: issue.message });
    }
  }
}

/** Entries are checked even when other fields failed, as long as the model and `pricing` itself are valid. */
const whenModelIsValid = {
  when: ({ value, issues }: z.core.ParsePayload) =>
    PRICE_MODELS.includes((value as { priceModel?: unknown } | null)?.priceModel as PriceModel) &&
    !issues.some((issue) => issue.path?.length === 1 && issue.path[0] === 'pricing'),
};

/** The fields PUT replaces, with the limits of contract §8. */
const replaceableFields = {
  name: boundedText(1, 250),
  termUnit: z.enum(TERM_UNITS),
  termCount: z
    .int({ error: 'must be an integer from 1 to 10000' })
    .min(1, { error: 'must be an integer from 1 to 10000' })
    .max(10_000, { error: 'must be an integer from 1 to 10000' }),
  priceModel: z.enum(PRICE_MODELS),
  description: boundedText(0, 4000).nullish(),
  pricing: PricingInput.nullish(),
};

const createFields = {
  ...replaceableFields,
  purchase: z.enum(PURCHASES),
  method: z.enum(BILLING_METHODS),
};

/**
 * `purchase` and `method` are fixed at creation; an update accepts them only when equal to the stored
 * ones, so a client may send back the body it created the price with.
 */
const updateFields = {
  ...replaceableFields,
  purchase: z.enum(PURCHASES).optional(),
  method: z.enum(BILLING_METHODS).optional(),
};

/**
 * GraphQL's inputs also take `taxBehavior` (absent: exclusive on creation, unchanged on update); the
 * REST bodies keep the fields contract §2.8 lists.
 */
const taxBehavior = z.enum(TAX_BEHAVIORS).nullish();

/** The body of `POST /prices`. */
export const PriceCreateInput = z
  .strictObject(createFields)
  .superRefine(checkPricingEntries, whenModelIsValid);
export const PriceCreateGraphqlInput = z
  .strictObject({ ...createFields, taxBehavior })
  .superRefine(checkPricingEntries, whenModelIsValid);
export type PriceCreateInput = z.infer<typeof PriceCreateGraphqlInput>;

/** A full replacement (`PUT /prices/{id}`): absent `description` and `pricing` become null and `{}`. */
export const PriceUpdateInput = z
  .strictObject(updateFields)
  .superRefine(checkPricingEntries, whenModelIsValid);
export const PriceUpdateGraphqlInput = z
  .strictObject({ ...updateFields, taxBehavior })
  .superRefine(checkPricingEntries, whenModelIsValid);
export type PriceUpdateInput = z.infer<typeof PriceUpdateGraphqlInput>;

/** Fields of the price response that are not request fields: ignored as input. */
export const PRICE_READ_ONLY_FIELDS = ['id'] as const;
