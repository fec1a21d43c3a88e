import { readFile } from 'node:fs/promises';
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import type { GraphQLInterfaceType } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { GENERATED, generateClient } from './codegen.ts';
import {
  CustomersByNameDocument,
  InvoiceWithCustomerDocument,
  RefetchDocument,
  RefetchManyDocument,
  RenameCustomerDocument,
} from './generated/graphql.ts';

const t = setupTestApp();

/** What Apollo needs to match fragments on an interface (a frontend generates it from the schema). */
const possibleTypes = {
  Node: schema.getPossibleTypes(schema.getType('Node') as GraphQLInterfaceType).map((type) => type.name),
};

/** A real Apollo Client with its normalized cache, over the app's fetch (the HTTP server's code path). */
function apolloFor(env: TestEnvironment) {
  return new ApolloClient({
    cache: new InMemoryCache({ possibleTypes }),
    link: new HttpLink({
      uri: 'http://test/graphql',
      headers: env.headers,
      fetch: async (input, init) => t.app.fetch(new Request(String(input), init)),
    }),
  });
}

async function rest(env: TestEnvironment, method: string, path: string, body: unknown) {
  const response = await t.rest(method, path, { env, body });
  expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
  return response.body;
}

let env: TestEnvironment;
let customerId: string;
let invoiceId: string;

beforeAll(async () => {
  env = await t.createEnvironment('Frontend');
  const created = await t.graphql(
    'mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } } }',
    {
      input: {
        name: 'Grace Hopper',
        handle: 'grace',
        currency: 'EUR',
        billingAddress: { city: 'Arlington' },
      },
    },
    { env },
  );
  customerId = created.body.data.customerCreate.customer.id;
  const draft = await rest(env, 'POST', '/invoices', {
    customerId,
    currency: null,
    date: '2026-03-01',
    items: [{ quantity: 1, unitAmount: 1000, title: 'Subscription' }],
  });
  invoiceId = draft.id;
  const booked = await t.graphql(
    'mutation ($id: UUID!) { invoiceBook(id: $id) { userErrors { message } } }',
    { id: invoiceId },
    { env },
  );
  expect(booked.body.data.invoiceBook.userErrors).toEqual([]);
});

describe('a typed client and a normalized cache', () => {
  it('the committed generated client is what graphql-codegen makes of schema.graphql and the documents', async () => {
    expect(await readFile(GENERATED, 'utf8'), 'run `npm run codegen:test` and commit the result').toBe(
      await generateClient(),
    );
  });

  it('keeps the invoice’s customer as billed apart from the live customer after a rename', async () => {
    const client = apolloFor(env);
    const before = await client.query({ query: InvoiceWithCustomerDocument, variables: { id: invoiceId } });
    expect(before.data?.invoice).toMatchObject({
      customerId,
      customer: { name: 'Grace Hopper', handle: 'grace', billingAddress: { city: 'Arlington' } },
      liveCustomer: { id: customerId, name: 'Grace Hopper' },
    });

    // The rename goes through the same client: its answer updates Customer:<id> in the cache.
    const renamed = await client.mutate({
      mutation: RenameCustomerDocument,
      variables: { id: customerId, name: 'Grace B. Hopper' },
    });
    expect(renamed.data?.customerUpdate?.userErrors).toEqual([]);

    // Read from the cache alone: the live customer shows the new name, the snapshot the billed one.
    const cached = client.readQuery({ query: InvoiceWithCustomerDocument, variables: { id: invoiceId } });
    const invoice = cached?.invoice;
    expect(invoice?.customer.name).toBe('Grace Hopper');
    expect(invoice?.liveCustomer.name).toBe('Grace B. Hopper');
    // The snapshot is a value inside the invoice's cache entry, never an entry of its own.
    const entries = client.cache.extract() as Record<string, { __typename?: string }>;
    expect(Object.values(entries).filter((entry) => entry.__typename === 'InvoiceCustomerSnapshot')).toEqual(
      [],
    );
    expect(entries[`Customer:${customerId}`]).toMatchObject({ name: 'Grace B. Hopper' });

    // And the server agrees on a fresh read.
    const fresh = await client.query({
      query: InvoiceWithCustomerDocument,
      variables: { id: invoiceId },
      fetchPolicy: 'network-only',
    });
    expect(fresh.data?.invoice?.customer.name).toBe('Grace Hopper');
    expect(fresh.data?.invoice?.liveCustomer.name).toBe('Grace B. Hopper');
  });

  it('refetches nodes by id, and another environment’s ids are null', async () => {
    const client = apolloFor(env);
    const one = await client.query({ query: RefetchDocument, variables: { id: customerId } });
    expect(one.data?.node).toEqual({ __typename: 'Customer', id: customerId, name: 'Grace B. Hopper' });
    const many = await client.query({
      query: RefetchManyDocument,
      variables: { ids: [invoiceId, customerId, '0190a1fc-0000-7000-8000-000000000000'] },
    });
    expect(many.data?.nodes).toEqual([
      { __typename: 'Invoice', id: invoiceId },
      { __typename: 'Customer', id: customerId },
      null,
    ]);

    const other = apolloFor(await t.createEnvironment('Elsewhere'));
    const foreign = await other.query({
      query: RefetchManyDocument,
      variables: { ids: [invoiceId, customerId] },
    });
    expect(foreign.data?.nodes).toEqual([null, null]);
    const single = await other.query({ query: RefetchDocument, variables: { id: customerId } });
    expect(single.data?.node).toBeNull();
  });

  it('pages a sorted, filtered connection with the typed documents both ways', async () => {
    const client = apolloFor(env);
    for (const name of ['Zed', 'Amy', 'Max']) {
      await t.graphql(
        'mutation ($input: CustomerCreateInput!) { customerCreate(input: $input) { customer { id } } }',
        { input: { name: `${name} Typed` } },
        { env },
      );
    }
    const first = await client.query({
      query: CustomersByNameDocument,
      variables: { first: 2, search: 'typed' },
    });
    const page = first.data?.customers;
    expect(page?.totalCount).toBe(3);
    expect(page?.edges.map((edge) => edge.node.name)).toEqual(['Amy Typed', 'Max Typed']);
    const last = await client.query({
      query: CustomersByNameDocument,
      variables: { last: 2, search: 'typed' },
    });
    expect(last.data?.customers.edges.map((edge) => edge.node.name)).toEqual(['Max Typed', 'Zed Typed']);
    expect(last.data?.customers.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: false });
  });
});
