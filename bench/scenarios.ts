import type { SeededData } from './seed.ts';

/** One request of a scenario; the n-th request of a run gets `request(n)`. */
export type BenchRequest = {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  headers: Record<string, string>;
  body?: string;
};

/** Sends `request` to the server at `url`: its status and JSON body. */
export async function sendJson(
  url: string,
  request: BenchRequest,
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${url}${request.path}`, {
    method: request.method,
    headers: request.headers,
    body: request.body,
  });
  return { status: response.status, body: await response.json() };
}

export type Scenario = {
  name: string;
  /** The status every response must have; any other counts as an error. */
  status: number;
  /** GraphQL answers 200 with an `errors` list when a request fails; those count as errors too. */
  graphql: boolean;
  request: (n: number) => BenchRequest;
  /**
   * Load by count instead of by time: each connection sends this many requests (one in the warm-up),
   * however long they take, for requests that take seconds each (the memory scenario).
   */
  requestsPerConnection?: number;
};

/** The GraphQL page the issue names: 50 invoices, each with its customer, items and settlements. */
export const INVOICE_PAGE_QUERY = `query InvoicePage($first: Int!) {
  invoices(first: $first) {
    edges {
      node {
        id handle status settlementStatus currency date totalInclVat totalDue
        customerId customer { name billingAddress { city country } }
        items { id title quantity unitAmount amount taxAmount tax { taxRate } }
        settlements { date amount reference }
      }
    }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const CUSTOMER_QUERY = `query CustomerById($id: UUID!) {
  customer(id: $id) {
    id name handle email currency paymentTerm collectionMode createdAt updatedAt
    billingAddress { street1 street2 postalCode city county country state }
  }
}`;

export const PAGE_SIZE = 50;

/** Three lines: two taxed at different rates, one discounted and untaxed. */
export const invoiceItems = (n: number) => [
  { quantity: 3, unitAmount: 1250, title: 'Seats', taxCode: 'VAT25' },
  { quantity: 1.5, unitAmount: 9999.5, title: 'Consulting hours', taxCode: 'VAT12', description: `Job ${n}` },
  { quantity: 1000, unitAmount: 0.25, title: 'API calls', discount: { percentage: 10, amount: 0 } },
];

/** The five measured endpoints, sent alike to the service and to the baseline. */
export function scenarios(data: SeededData): Scenario[] {
  const headers = { authorization: `Bearer ${data.token}`, 'x-environment': data.environmentId };
  const json = { ...headers, 'content-type': 'application/json' };
  const pick = (ids: string[], n: number) => ids[n % ids.length] as string;
  const graphql = (query: string, operationName: string, variables: Record<string, unknown>) =>
    JSON.stringify({ query, operationName, variables });

  return [
    {
      name: 'POST /invoices (3 items)',
      status: 201,
      graphql: false,
      request: (n) => ({
        method: 'POST',
        path: '/invoices',
        headers: json,
        body: JSON.stringify({
          customerId: pick(data.customerIds, n),
          currency: 'EUR',
          date: '2026-03-31',
          dueDate: null,
          memo: 'Month-end run',
          items: invoiceItems(n),
        }),
      }),
    },
    {
      name: 'GET /invoices/{id}',
      status: 200,
      graphql: false,
      request: (n) => ({ method: 'GET', path: `/invoices/${pick(data.invoiceIds, n)}`, headers }),
    },
    {
      name: 'PATCH /customers/{id}',
      status: 200,
      graphql: false,
      request: (n) => ({
        method: 'PATCH',
        path: `/customers/${pick(data.customerIds, n)}`,
        headers: json,
        body: JSON.stringify({ name: `Customer ${n}`, email: `billing+${n}@example.com` }),
      }),
    },
    {
      name: 'GraphQL invoices(first: 50)',
      status: 200,
      graphql: true,
      request: () => ({
        method: 'POST',
        path: '/graphql',
        headers: json,
        body: graphql(INVOICE_PAGE_QUERY, 'InvoicePage', { first: PAGE_SIZE }),
      }),
    },
    {
      name: 'GraphQL customer(id)',
      status: 200,
      graphql: true,
      request: (n) => ({
        method: 'POST',
        path: '/graphql',
        headers: json,
        body: graphql(CUSTOMER_QUERY, 'CustomerById', { id: pick(data.customerIds, n) }),
      }),
    },
  ];
}

/**
 * Memory only (issue 21, item 5): the heaviest GraphQL document the limits allow, `aliases` copies of an
 * invoice page (`first: pageSize`), each node with what the measured page asks (customer, items,
 * settlements), sent to an environment of invoices with the most lines an invoice may have. The bench
 * finds the most aliases the query cost limit and the alias limit admit, and the largest page whose answer
 * the response-size limit lets through, by asking the service. Measured on the service alone: neither the
 * baseline nor PostGraphile serves it.
 */
export function heaviestPageScenario(
  data: Pick<SeededData, 'token' | 'environmentId'>,
  aliases: number,
  pageSize: number,
): Scenario {
  const headers = {
    authorization: `Bearer ${data.token}`,
    'x-environment': data.environmentId,
    'content-type': 'application/json',
  };
  // The page's connection selection, `{ edges { node { … } } pageInfo { … } }`, as INVOICE_PAGE_QUERY has it.
  const selection = INVOICE_PAGE_QUERY.slice(
    INVOICE_PAGE_QUERY.indexOf('{', INVOICE_PAGE_QUERY.indexOf('invoices(')),
    INVOICE_PAGE_QUERY.lastIndexOf('}'),
  ).trim();
  const fields = Array.from(
    { length: aliases },
    (_, i) => `a${i}: invoices(first: ${pageSize}) ${selection}`,
  );
  const body = JSON.stringify({
    query: `query Heaviest {\n${fields.join('\n')}\n}`,
    operationName: 'Heaviest',
  });
  return {
    name: `GraphQL heaviest allowed (${aliases} × invoices(first: ${pageSize}))`,
    status: 200,
    graphql: true,
    request: () => ({ method: 'POST', path: '/graphql', headers, body }),
    requestsPerConnection: 3,
  };
}
