import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp, TestEnvironment } from '../support/harness.ts';

/** Given-state helpers for the invoice tests: customers through the API, catalog rows through SQL. */
export function invoiceFixtures(t: TestApp) {
  /** Runs a GraphQL operation and returns its data, failing the test on any GraphQL error. */
  async function gql<T = any>(env: TestEnvironment, query: string, variables?: Record<string, unknown>) {
    const response = await t.graphql(query, variables, { env });
    expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
    return response.body.data as T;
  }

  return {
    gql,

    async createCustomer(env: TestEnvironment, input: Record<string, unknown> = {}) {
      const data = await gql(
        env,
        `mutation ($input: CustomerCreateInput!) {
          customerCreate(input: $input) { customer { id } userErrors { message } }
        }`,
        { input: { name: 'Ada Lovelace', currency: 'EUR', ...input } },
      );
      expect(data.customerCreate.userErrors).toEqual([]);
      return data.customerCreate.customer.id as string;
    },

    async createTaxCode(env: TestEnvironment, code: string, rate: string) {
      await t.sql(
        `insert into tax_code (id, environment_id, code, rate, description, created_at)
         values ($1, $2, $3, $4, null, now())`,
        [randomUUID(), env.id, code, rate],
      );
    },

    async createProduct(
      env: TestEnvironment,
      product: { handle: string; name: string; description?: string | null; taxCode?: string | null },
    ) {
      await t.sql(
        `insert into product (id, environment_id, name, handle, description, tax_code, created_at)
         values ($1, $2, $3, $4, $5, $6, now())`,
        [
          randomUUID(),
          env.id,
          product.name,
          product.handle,
          product.description ?? null,
          product.taxCode ?? null,
        ],
      );
    },

    /** A draft through POST /invoices; returns the response body. */
    async createInvoice(env: TestEnvironment, body: Record<string, unknown>) {
      const response = await t.rest('POST', '/invoices', {
        env,
        body: { currency: null, date: '2026-03-01', items: null, ...body },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      return response.body;
    },
  };
}
