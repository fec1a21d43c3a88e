import { beforeAll, describe, expect, it } from 'vitest';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();

const CREATE = `mutation($name: String!) { customerCreate(input: { name: $name }) { customer { id } } }`;

/**
 * What a selection reads is worked out once per parsed document and per the field nodes merged into a
 * field (perSelection): a fragment's field merged with more fields in one place, and alone in another,
 * is two selections, and each answers with its own columns.
 */
describe('a selection worked out once per document', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment();
    const created = await t.graphql(CREATE, { name: 'Dee' }, { env });
    customerId = created.body.data.customerCreate.customer.id as string;
    const invoice = await t.rest('POST', '/invoices', {
      env,
      body: {
        customerId,
        currency: 'eur',
        date: '2026-03-01',
        memo: 'March',
        items: [{ quantity: 2, unitAmount: 1000, title: 'Seats' }],
      },
    });
    expect(invoice.status).toBe(201);
  });

  it('answers a fragment’s field alone and merged with other fields, each with its columns, request after request', async () => {
    // given: one text; `invoices` of the fragment alone under `a`, merged with a selection of `memo` under `b`
    const document = `query($id: UUID!) {
      a: customer(id: $id) { ...Invoices }
      b: customer(id: $id) { ...Invoices invoices(first: 5) { edges { node { memo items { title } } } } }
      c: customer(id: $id) { name }
      d: customer(id: $id) { email name }
    }
    fragment Invoices on Customer { invoices(first: 5) { edges { node { status } } } }`;

    // when: sent three times, so the later ones find what the first worked out
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await t.graphql(document, { id: customerId }, { env }));

    // then
    for (const answer of answers) {
      expect(answer.body).toEqual({
        data: {
          a: { invoices: { edges: [{ node: { status: 'draft' } }] } },
          b: {
            invoices: { edges: [{ node: { status: 'draft', memo: 'March', items: [{ title: 'Seats' }] } }] },
          },
          c: { name: 'Dee' },
          d: { email: null, name: 'Dee' },
        },
      });
    }
  });
});
