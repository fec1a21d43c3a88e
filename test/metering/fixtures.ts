import { expect } from 'vitest';
import { gql } from '../support/catalog.ts';
import type { TestApp, TestEnvironment } from '../support/harness.ts';

export const METRIC_FIELDS =
  'id code name aggregation fieldName filters rounding roundingDecimals createdAt updatedAt';

export type EventBody = {
  transactionId: string;
  customer: string;
  metric: string;
  timestamp: string;
  properties?: Record<string, unknown>;
};

/** Metering given-state and reads, all through the API. */
export function meteringFixtures(t: TestApp) {
  const tryCreateMetric = async (env: TestEnvironment, input: Record<string, unknown>) =>
    (
      await gql(
        t,
        env,
        `mutation ($input: BillableMetricCreateInput!) {
          billableMetricCreate(input: $input) { billableMetric { ${METRIC_FIELDS} } userErrors { field message code } }
        }`,
        { input },
      )
    ).billableMetricCreate;

  const createMetric = async (env: TestEnvironment, input: Record<string, unknown>) => {
    const payload = await tryCreateMetric(env, { name: String(input.code), ...input });
    expect(payload.userErrors).toEqual([]);
    return payload.billableMetric;
  };

  /** POST /events; answers the response. */
  const ingest = (env: TestEnvironment, events: unknown[], headers: Record<string, string> = {}) =>
    t.rest('POST', '/events', { env, body: { events }, headers });

  /** POST /events that must answer 200; answers the batch result. */
  const ingestOk = async (env: TestEnvironment, events: unknown[]) => {
    const response = await ingest(env, events);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body;
  };

  const usage = async (env: TestEnvironment, subscriptionItemId: string, at: string) =>
    (
      await gql(
        t,
        env,
        `query ($id: UUID!, $at: DateTime) { subscriptionItemUsage(subscriptionItemId: $id, at: $at) {
          periodStart periodEnd quantity amount currency billed metric { code } subscriptionItem { id } } }`,
        { id: subscriptionItemId, at },
      )
    ).subscriptionItemUsage;

  return { tryCreateMetric, createMetric, ingest, ingestOk, usage };
}

let sequence = 0;
/** A transaction id unique within the test run. */
export const txn = (prefix = 'tx') => `${prefix}-${Date.now().toString(36)}-${++sequence}`;
