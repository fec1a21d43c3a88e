import { expect } from 'vitest';
import type { TestApp, TestEnvironment, TestResponse } from './harness.ts';

/** Runs a GraphQL operation that must succeed without errors and returns its `data`. */
export async function gql(
  t: TestApp,
  env: TestEnvironment,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<any> {
  const response = await t.graphql(query, variables, { env });
  expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
  expect(response.status).toBe(200);
  return response.body.data;
}

/**
 * Runs a `<object><Verb>(input: ...)` mutation that must succeed (no userErrors) and returns the object.
 * `selection` is the object's field selection.
 */
export async function mutate(
  t: TestApp,
  env: TestEnvironment,
  mutation: string,
  selection: string,
  variables: Record<string, unknown>,
): Promise<any> {
  const key = mutation.replace(/(Create|Update)$/, '');
  const args = Object.keys(variables)
    .map((name) => `${name}: $${name}`)
    .join(', ');
  const types: Record<string, string> = { id: 'UUID!', input: `${upperFirst(mutation)}Input!` };
  const declarations = Object.keys(variables)
    .map((name) => `$${name}: ${types[name]}`)
    .join(', ');
  const data = await gql(
    t,
    env,
    `mutation(${declarations}) { ${mutation}(${args}) { ${key} { ${selection} } userErrors { field message code } } }`,
    variables,
  );
  expect(data[mutation].userErrors).toEqual([]);
  return data[mutation][key];
}

const upperFirst = (text: string) => text[0]?.toUpperCase() + text.slice(1);

export const createTaxCode = (t: TestApp, env: TestEnvironment, input: Record<string, unknown>) =>
  mutate(t, env, 'taxCodeCreate', 'id code rate description', { input });

export const createProduct = (t: TestApp, env: TestEnvironment, input: Record<string, unknown>) =>
  mutate(t, env, 'productCreate', 'id name handle description taxCode createdAt updatedAt', { input });

export const createLedgerAccount = (t: TestApp, env: TestEnvironment, input: Record<string, unknown>) =>
  mutate(t, env, 'ledgerAccountCreate', 'id name accountingCode barred', { input });

/** A string of `length` characters. */
export const text = (length: number, character = 'x') => character.repeat(length);

/** The JSON Pointers a problem response names, in order. */
export const pointers = (response: TestResponse): string[] | undefined =>
  (response.body.errors as { pointer: string }[] | undefined)?.map((error) => error.pointer);
