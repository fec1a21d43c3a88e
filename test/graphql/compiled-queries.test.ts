import { beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();

const LIST = `query ($filter: InvoiceFilter, $first: Int) {
  invoices(filter: $filter, first: $first) { edges { node { id } } }
}`;

describe('compiled queries', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await t.createEnvironment('Compiled');
  });

  it('words the errors of query variables exactly as GraphQL.js does', async () => {
    // when a query's variables do not fit their types
    const unknownField = await t.graphql(LIST, { filter: { bogus: true } }, { env });
    const wrongType = await t.graphql(LIST, { first: 'ten' }, { env });

    // then the errors read as the standard executor words them
    expect(unknownField.body.errors).toEqual([
      expect.objectContaining({
        message:
          'Variable "$filter" got invalid value { bogus: true }; Field "bogus" is not defined by type "InvoiceFilter".',
      }),
    ]);
    expect(wrongType.body.errors).toEqual([
      expect.objectContaining({
        message: 'Variable "$first" got invalid value "ten"; Int cannot represent non-integer value: "ten"',
      }),
    ]);
  });

  it('answers a query whose variables fit', async () => {
    const response = await t.graphql(LIST, { filter: { status: 'draft' }, first: 5 }, { env });

    expect(response.body).toEqual({ data: { invoices: { edges: [] } } });
  });
});
