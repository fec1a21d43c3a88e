import { invoiceFixtures } from '../invoice/fixtures.ts';
import type { TestApp, TestEnvironment } from '../support/harness.ts';

/**
 * A new account set of the environment's chart (made by the ledger's first read) that defers revenue
 * over the lines' service periods, evenly: sales 4000, income 4100, tax 2200, deferral 2400. Its id.
 */
export async function evenlyDeferringAccountSet(t: TestApp, env: TestEnvironment): Promise<string> {
  const f = invoiceFixtures(t);
  await f.gql(env, 'query { ledgerSettings { cashAccount { id } } }');
  const codes = await t.sql<{ id: string; accounting_code: string }>(
    'select id, accounting_code from ledger_account where environment_id = $1',
    [env.id],
  );
  const code = (accountingCode: string) => codes.find((row) => row.accounting_code === accountingCode)?.id;
  const set = await f.gql(
    env,
    'mutation ($input: AccountSetCreateInput!) { accountSetCreate(input: $input) { accountSet { id } } }',
    {
      input: {
        salesAccountId: code('4000'),
        incomeAccountId: code('4100'),
        taxAccountId: code('2200'),
        deferralAccountId: code('2400'),
        recognitionStrategy: 'even_distribution',
      },
    },
  );
  return set.accountSetCreate.accountSet.id as string;
}
