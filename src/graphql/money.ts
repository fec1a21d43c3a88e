import { minorUnitDigits } from '../money/currency.ts';
import { formatMoney } from '../money/format.ts';
import { builder } from './builder.ts';

/** An amount with its currency: what a `Money` field resolves to. */
export type Money = { amount: number; currency: string };

/** The locale `formatted` uses unless asked for another. */
export const DEFAULT_MONEY_LOCALE = 'en';

/** The locale as Intl knows it, or the default for one Intl cannot read (`formatted` never fails). */
function canonicalLocale(locale: string): string {
  try {
    return Intl.getCanonicalLocales(locale)[0] ?? DEFAULT_MONEY_LOCALE;
  } catch {
    return DEFAULT_MONEY_LOCALE;
  }
}

export const MoneyRef = builder.objectRef<Money>('Money').implement({
  description:
    'An amount of money that says its currency and minor unit, next to the plain integer field it ' +
    'types (`totalInclVatMoney` beside `totalInclVat`).',
  fields: (t) => ({
    amount: t.expose('amount', {
      // SafeInt, not Int: minor units exceed 32 bits for large amounts.
      type: 'SafeInt',
      description:
        'The amount in minor units of the currency (cents for EUR, yen for JPY): exact, an integer.',
    }),
    currency: t.exposeString('currency', { description: 'ISO 4217 currency code, e.g. EUR.' }),
    minorUnit: t.int({
      description:
        'How many decimal digits the minor unit has (2 for EUR, 0 for JPY, 3 for KWD): amount / 10^minorUnit is the amount in major units.',
      resolve: (money) => minorUnitDigits(money.currency),
    }),
    formatted: t.string({
      description: 'The amount as people read it in `locale`, with its currency (Intl), e.g. €1,234.50.',
      args: {
        locale: t.arg.string({
          defaultValue: DEFAULT_MONEY_LOCALE,
          description: 'A BCP 47 language tag such as en, de-DE or fr-FR; an unknown one formats as en.',
        }),
      },
      resolve: (money, { locale }) =>
        formatMoney(money.amount, money.currency, canonicalLocale(locale ?? DEFAULT_MONEY_LOCALE)),
    }),
  }),
});
