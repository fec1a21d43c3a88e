import { beforeAll, describe, expect, it } from 'vitest';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

const MONEY = 'amount currency minorUnit formatted de: formatted(locale: "de-DE")';

describe('typed Money on invoice totals', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment();
  });

  it('answers each total with its currency, minor unit and formatting beside the plain integer', async () => {
    // given a draft of 2 × 1,234.56 EUR with 20 % VAT
    const customerId = await f.createCustomer(env);
    await f.createTaxCode(env, 'VAT20', '20');
    const created = await f.gql(
      env,
      `mutation ($input: InvoiceCreateInput!) { invoiceCreate(input: $input) { invoice { id } userErrors { code } } }`,
      {
        input: {
          customerId,
          date: '2026-05-01',
          items: [{ quantity: 2, unitAmount: 123456, title: 'Widget', taxCode: 'VAT20' }],
        },
      },
    );
    const { id } = created.invoiceCreate.invoice;

    // when its totals are read as Money
    const data = await f.gql(
      env,
      `query ($id: UUID!) { invoice(id: $id) { totalInclVat totalExclVatMoney { ${MONEY} }
        totalVatMoney { amount } totalInclVatMoney { ${MONEY} } totalDueMoney { amount formatted(locale: "fr-FR") } } }`,
      { id },
    );

    // then
    expect(data.invoice.totalExclVatMoney).toEqual({
      amount: 246912,
      currency: 'EUR',
      minorUnit: 2,
      formatted: '€2,469.12',
      de: '2.469,12\u00a0€',
    });
    expect(data.invoice.totalVatMoney).toEqual({ amount: 49382 });
    expect(data.invoice.totalInclVatMoney.amount).toBe(data.invoice.totalInclVat);
    expect(data.invoice.totalInclVatMoney.formatted).toBe('€2,962.94');
    expect(data.invoice.totalDueMoney).toEqual({ amount: 296294, formatted: '2\u202f962,94\u00a0€' });
  });
});
