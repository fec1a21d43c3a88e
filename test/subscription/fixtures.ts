import { expect } from 'vitest';
import { gql, mutate } from '../support/catalog.ts';
import type { TestApp, TestEnvironment } from '../support/harness.ts';

export const SUBSCRIPTION_FIELDS = `id handle currency status autoRenewal cancelledAt createdAt updatedAt
  customer { id }
  term { start end }
  items { id quantity nextQuantity nextQuantityFrom startsOn endsOn billAt period { start end } method purchase
    product { id name } price { id name } }`;

export const PRORATION_LINE_FIELDS =
  'kind subscriptionItemId description quantity amount periodStart periodEnd invoiceId';

const RUN_FIELDS = `id asOf status triggeredBy startedAt finishedAt invoiceCount periodCount renewalCount endedCount
  invoiceIds errors { customerId message }`;

const INVOICE_FIELDS = `id handle status date currency totalExclVat totalVat totalInclVat customerId
  items { quantity unitAmount sku title description periodStart periodEnd amount taxAmount tax { taxCode taxRate } }`;

export type PriceInput = {
  name?: string;
  termUnit?: 'day' | 'week' | 'month' | 'year';
  termCount?: number;
  purchase?: 'one_time' | 'recurring';
  priceModel?: 'fee' | 'volume' | 'graduated' | 'package';
  method?: 'advance' | 'arrears' | 'event_based';
  pricing: Record<string, unknown>;
};

/** Given-state helpers for subscriptions and billing, all through the GraphQL API. */
export function billingFixtures(t: TestApp) {
  const createCustomer = async (env: TestEnvironment, input: Record<string, unknown> = {}) =>
    (await mutate(t, env, 'customerCreate', 'id', { input: { name: 'Ada', currency: 'EUR', ...input } }))
      .id as string;

  const createProduct = async (env: TestEnvironment, input: Record<string, unknown> = {}) =>
    mutate(t, env, 'productCreate', 'id name handle taxCode', { input: { name: 'Seats', ...input } });

  const createPrice = async (env: TestEnvironment, input: PriceInput) =>
    mutate(t, env, 'priceCreate', 'id name', {
      input: {
        name: 'Monthly',
        termUnit: 'month',
        termCount: 1,
        purchase: 'recurring',
        priceModel: 'fee',
        method: 'advance',
        ...input,
      },
    });

  /**
   * A EUR price "Losing" whose `lose()` replaces its EUR pricing by USD's (through PUT /prices), so a run
   * cannot bill a subscription made on it in EUR, and whose `regain(amount)` gives it EUR pricing again.
   */
  const losingPrice = async (env: TestEnvironment) => {
    const losing = await createPrice(env, { name: 'Losing', pricing: { eur: { amount: 700 } } });
    const put = async (pricing: Record<string, unknown>) => {
      const body = { name: 'Losing', termUnit: 'month', termCount: 1, priceModel: 'fee', pricing };
      expect((await t.rest('PUT', `/prices/${losing.id}`, { env, body })).status).toBe(200);
    };
    return {
      ...losing,
      lose: () => put({ usd: { amount: 1 } }),
      regain: (amount: number) => put({ eur: { amount } }),
    };
  };

  /** Runs subscriptionCreate and returns its payload (subscription and userErrors). */
  const trySubscribe = async (env: TestEnvironment, input: Record<string, unknown>) =>
    (
      await gql(
        t,
        env,
        `mutation ($input: SubscriptionCreateInput!) {
          subscriptionCreate(input: $input) { subscription { ${SUBSCRIPTION_FIELDS} } userErrors { field message code } }
        }`,
        { input },
      )
    ).subscriptionCreate;

  const subscribe = async (env: TestEnvironment, input: Record<string, unknown>) => {
    const payload = await trySubscribe(env, input);
    expect(payload.userErrors).toEqual([]);
    return payload.subscription;
  };

  const tryUpdate = async (
    env: TestEnvironment,
    id: string,
    input: Record<string, unknown>,
    options: { preview?: boolean } = {},
  ) =>
    (
      await gql(
        t,
        env,
        `mutation ($id: UUID!, $input: SubscriptionUpdateInput!, $preview: Boolean) {
          subscriptionUpdate(id: $id, input: $input, preview: $preview) {
            subscription { ${SUBSCRIPTION_FIELDS} } prorationLines { ${PRORATION_LINE_FIELDS} } userErrors { field message code }
          }
        }`,
        { id, input, ...options },
      )
    ).subscriptionUpdate;

  const tryCancel = async (
    env: TestEnvironment,
    id: string,
    at?: string,
    options: { proration?: 'create' | 'none' | 'invoice_now'; preview?: boolean } = {},
  ) =>
    (
      await gql(
        t,
        env,
        `mutation ($id: UUID!, $at: DateTime, $proration: ProrationBehavior, $preview: Boolean) {
          subscriptionCancel(id: $id, at: $at, proration: $proration, preview: $preview) {
            subscription { ${SUBSCRIPTION_FIELDS} } prorationLines { ${PRORATION_LINE_FIELDS} } userErrors { field message code }
          }
        }`,
        { id, at, ...options },
      )
    ).subscriptionCancel;

  const tryRecordUsage = async (
    env: TestEnvironment,
    args: { subscriptionItemId: string; quantity: number; timestamp: string; idempotencyKey: string },
  ) =>
    (
      await gql(
        t,
        env,
        `mutation ($subscriptionItemId: UUID!, $quantity: Float!, $timestamp: DateTime!, $idempotencyKey: String!) {
          usageRecord(subscriptionItemId: $subscriptionItemId, quantity: $quantity, timestamp: $timestamp,
            idempotencyKey: $idempotencyKey) {
            usageRecord { id subscriptionItemId quantity timestamp idempotencyKey } userErrors { field message code }
          }
        }`,
        args,
      )
    ).usageRecord;

  /** Runs billingRunCreate as of `asOf` and returns the run, failing on userErrors. */
  const runBilling = async (env: TestEnvironment, asOf: string) => {
    const data = await gql(
      t,
      env,
      `mutation ($asOf: DateTime) { billingRunCreate(asOf: $asOf) { billingRun { ${RUN_FIELDS} } userErrors { field message code } } }`,
      { asOf },
    );
    expect(data.billingRunCreate.userErrors).toEqual([]);
    return data.billingRunCreate.billingRun;
  };

  const billingRun = async (env: TestEnvironment, id: string) =>
    (await gql(t, env, `query ($id: UUID!) { billingRun(id: $id) { ${RUN_FIELDS} } }`, { id })).billingRun;

  /** The customer's invoices, oldest first. */
  const invoicesOf = async (env: TestEnvironment, customerId: string) =>
    (
      await gql(
        t,
        env,
        `query ($customerId: UUID!) { invoices(first: 15, filter: { customerId: $customerId }) { edges { node { ${INVOICE_FIELDS} } } } }`,
        { customerId },
      )
    ).invoices.edges.map((edge: { node: unknown }) => edge.node);

  return {
    createCustomer,
    createProduct,
    createPrice,
    losingPrice,
    trySubscribe,
    subscribe,
    tryUpdate,
    tryCancel,
    tryRecordUsage,
    runBilling,
    billingRun,
    invoicesOf,
  };
}

/** Midnight UTC of a date, as the API writes date-times. */
export const midnight = (date: string) => `${date}T00:00:00.000Z`;
