/**
 * PostGraphile v5 as the benchmark's peer (issue 21): the requests that ask it what two of the service's
 * GraphQL scenarios ask the service, in its naming, and the check that both answer the same. `npm run bench`
 * (bench/run.ts) starts bench/postgraphile-server.ts beside the service and the baseline and measures these
 * in the same rounds; `npm run bench:postgraphile` is `npm run bench` limited to the GraphQL scenarios.
 *
 * PostGraphile answers both shapes: the invoice page (its `allInvoices` connection with the customer as a
 * join and the items and settlements as has-many connections) and `customerByRowId` with the billing address
 * as the jsonb it is stored as (the same keys the service's object type has). Its `totalDue` is not a
 * column: the check compares it with `totalInclVat - settledAmount`, which PostGraphile reads instead.
 */
import { deepStrictEqual } from 'node:assert/strict';
import type { BenchRequest, Scenario } from './scenarios.ts';
import { PAGE_SIZE, sendJson } from './scenarios.ts';
import type { SeededData } from './seed.ts';

/** The service's page (scenarios.ts INVOICE_PAGE_QUERY) in PostGraphile's naming: the same rows and columns. */
export const POSTGRAPHILE_PAGE_QUERY = `query InvoicePage($first: Int!) {
  allInvoices(first: $first, orderBy: PRIMARY_KEY_ASC) {
    nodes {
      rowId handle status settlementStatus currency date totalInclVat settledAmount
      customerId customerByCustomerId { name billingAddress }
      invoiceItemsByInvoiceId(orderBy: PRIMARY_KEY_ASC) { nodes { rowId title quantity unitAmount amount taxAmount taxRate } }
      settlementsByInvoiceId(orderBy: PRIMARY_KEY_ASC) { nodes { date amount reference } }
    }
    pageInfo { hasNextPage endCursor }
  }
}`;

/** The service's customer(id) (scenarios.ts CUSTOMER_QUERY) in PostGraphile's naming. */
export const POSTGRAPHILE_CUSTOMER_QUERY = `query CustomerById($id: UUID!) {
  customerByRowId(rowId: $id) {
    rowId name handle email currency paymentTerm collectionMode createdAt updatedAt billingAddress
  }
}`;

const ADDRESS_FIELDS = ['street1', 'street2', 'postalCode', 'city', 'county', 'country', 'state'] as const;

// biome-ignore lint/suspicious/noExplicitAny: GraphQL answers are untyped JSON here
type Json = any;

const number = (value: unknown) => (value === null || value === undefined ? null : Number(value));
const lower = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value);
const instant = (value: unknown) =>
  value === null || value === undefined ? null : Date.parse(String(value));
const address = (value: Json, fields: readonly string[] = ADDRESS_FIELDS) =>
  Object.fromEntries(fields.map((field) => [field, value?.[field] ?? null]));

/** A page of invoices as both servers must agree on it. */
function invoice(node: Json, items: Json[], settlements: Json[], customer: Json, totalDue: unknown) {
  return {
    id: node.id ?? node.rowId,
    handle: node.handle,
    status: lower(node.status),
    settlementStatus: lower(node.settlementStatus),
    currency: node.currency,
    date: node.date,
    totalInclVat: number(node.totalInclVat),
    totalDue: number(totalDue),
    customerId: node.customerId,
    customer: {
      name: customer?.name,
      billingAddress: address(customer?.billingAddress, ['city', 'country']),
    },
    items: items.map((item) => ({
      id: item.id ?? item.rowId,
      title: item.title,
      quantity: number(item.quantity),
      unitAmount: number(item.unitAmount),
      amount: number(item.amount),
      taxAmount: number(item.taxAmount),
      taxRate: number(item.tax?.taxRate ?? item.taxRate),
    })),
    settlements: settlements.map((settlement) => ({
      date: settlement.date,
      amount: number(settlement.amount),
      reference: settlement.reference,
    })),
  };
}

function customer(node: Json) {
  if (!node) return null;
  return {
    id: node.id ?? node.rowId,
    name: node.name,
    handle: node.handle,
    email: node.email,
    currency: node.currency,
    paymentTerm: lower(node.paymentTerm),
    collectionMode: lower(node.collectionMode),
    createdAt: instant(node.createdAt),
    updatedAt: instant(node.updatedAt),
    billingAddress: address(node.billingAddress),
  };
}

type Peer = {
  /** The same request in PostGraphile's naming. */
  request: (n: number) => BenchRequest;
  /** The service's and PostGraphile's answer, each reduced to what both must agree on. */
  fromService: (body: Json) => unknown;
  fromPostgraphile: (body: Json) => unknown;
};

/** PostGraphile's counterparts of the service's scenarios, by the service scenario's name. */
export function postgraphilePeers(data: SeededData): Map<string, Peer> {
  // No token: PostGraphile checks none (an API in front of it would); the environment sets the RLS setting.
  const headers = { 'content-type': 'application/json', 'x-environment': data.environmentId };
  const pick = (ids: string[], n: number) => ids[n % ids.length] as string;
  const post = (query: string, operationName: string, variables: Record<string, unknown>): BenchRequest => ({
    method: 'POST',
    path: '/graphql',
    headers,
    body: JSON.stringify({ query, operationName, variables }),
  });
  return new Map<string, Peer>([
    [
      'GraphQL invoices(first: 50)',
      {
        request: () => post(POSTGRAPHILE_PAGE_QUERY, 'InvoicePage', { first: PAGE_SIZE }),
        fromService: (body) =>
          (body.data?.invoices?.edges ?? []).map(({ node }: Json) =>
            invoice(node, node.items, node.settlements, node.customer, node.totalDue),
          ),
        fromPostgraphile: (body) =>
          (body.data?.allInvoices?.nodes ?? []).map((node: Json) =>
            invoice(
              node,
              node.invoiceItemsByInvoiceId.nodes,
              node.settlementsByInvoiceId.nodes,
              node.customerByCustomerId,
              Number(node.totalInclVat) - Number(node.settledAmount),
            ),
          ),
      },
    ],
    [
      'GraphQL customer(id)',
      {
        // The same customers in the same order as the service's scenario.
        request: (n) => post(POSTGRAPHILE_CUSTOMER_QUERY, 'CustomerById', { id: pick(data.customerIds, n) }),
        fromService: (body) => customer(body.data?.customer),
        fromPostgraphile: (body) => customer(body.data?.customerByRowId),
      },
    ],
  ]);
}

/** PostGraphile's scenario for a service scenario: the same name, status and error counting. */
export function peerScenario(scenario: Scenario, peer: Peer): Scenario {
  return { ...scenario, request: peer.request };
}

/**
 * Sends the n-th request of the scenario to the service and PostGraphile's to PostGraphile, and fails
 * unless both answer without errors and the same (for the page: the same 50 invoices with the same
 * customer, items and settlements).
 */
export async function checkSameAnswers(
  scenario: Scenario,
  peer: Peer,
  urls: { service: string; postgraphile: string },
  n = 0,
): Promise<void> {
  const ask = async (url: string, request: BenchRequest) => {
    const { status, body } = (await sendJson(url, request)) as { status: number; body: Json };
    if (status !== scenario.status || body.errors)
      throw new Error(`${scenario.name}: ${url} answered ${status}: ${JSON.stringify(body).slice(0, 500)}`);
    return body;
  };
  const service = peer.fromService(await ask(urls.service, scenario.request(n)));
  const postgraphile = peer.fromPostgraphile(await ask(urls.postgraphile, peer.request(n)));
  if (Array.isArray(service) && service.length === 0)
    throw new Error(`${scenario.name}: the service answered an empty page`);
  deepStrictEqual(
    postgraphile,
    service,
    `${scenario.name}: PostGraphile must answer what the service answers`,
  );
}
