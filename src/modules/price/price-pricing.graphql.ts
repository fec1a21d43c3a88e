import { builder } from '../../graphql/builder.ts';
import { PriceRef } from './price.graphql.ts';
import type { PackageEntry, PricingEntry, Tier, TieredEntry } from './pricing.ts';

/*
 * The typed reading of a price's `pricing`. Input stays the contract's JSON object (REST and GraphQL
 * take the same shape, refused field by field with JSON pointers); clients that want a schema to
 * generate code from read these types instead of parsing the JSON.
 */

type CurrencyEntry = { currency: string; entry: PricingEntry };

const isTiered = (entry: PricingEntry): entry is TieredEntry => 'tiers' in entry;
const isPackage = (entry: PricingEntry): entry is PackageEntry => 'packageSize' in entry;

const PricingTierRef = builder.objectRef<Tier>('PricingTier').implement({
  description: 'One tier of a volume or graduated price, in the order the tiers apply.',
  fields: (t) => ({
    upTo: t.float({
      nullable: true,
      description: 'The largest quantity the tier covers (inclusive); null on the last tier: no upper bound.',
      resolve: (tier) => tier.upTo,
    }),
    unitAmount: t.float({
      description: 'Per unit, in minor units of the currency; may be a fraction of a minor unit.',
      resolve: (tier) => tier.unitAmount,
    }),
    flatAmount: t.float({
      nullable: true,
      description: 'Charged once when the quantity reaches the tier, in minor units; null when none.',
      resolve: (tier) => tier.flatAmount ?? null,
    }),
  }),
});

const PricingEntryRef = builder.objectRef<CurrencyEntry>('PricingEntry').implement({
  description:
    "A price's amounts in one currency. Which fields are set follows the price's priceModel: fee sets " +
    'amount; package sets amount and packageSize; volume and graduated set tiers.',
  fields: (t) => ({
    currency: t.string({
      description: 'Lowercase ISO 4217 code, as the key of `pricing`.',
      resolve: ({ currency }) => currency,
    }),
    amount: t.float({
      nullable: true,
      description:
        'fee: per unit; package: per started package. In minor units (may be a fraction of one for fee). Null for tiered models.',
      resolve: ({ entry }) => (isTiered(entry) ? null : entry.amount),
    }),
    packageSize: t.int({
      nullable: true,
      description: 'package: the units one package holds. Null for other models.',
      resolve: ({ entry }) => (isPackage(entry) ? entry.packageSize : null),
    }),
    tiers: t.field({
      type: [PricingTierRef],
      nullable: true,
      description: 'volume and graduated: the tiers, the last with upTo null. Null for other models.',
      resolve: ({ entry }) => (isTiered(entry) ? entry.tiers : null),
    }),
  }),
});

builder.objectField(PriceRef, 'pricingEntries', (t) =>
  t.field({
    type: [PricingEntryRef],
    description: '`pricing` as typed entries, one per currency, ordered by currency code.',
    resolve: (price) =>
      Object.entries(price.pricing as Record<string, PricingEntry>)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([currency, entry]) => ({ currency, entry })),
  }),
);
