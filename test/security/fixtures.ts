import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp, TestEnvironment } from '../support/harness.ts';

/** A tenant environment whose every name, handle and code carries `marker`, so a leak is easy to spot. */
export type MarkedEnvironment = TestEnvironment & { marker: string };

/** The kinds of object a request can name; each factory makes a new one and returns how it is named. */
export type Target =
  | 'customer'
  | 'product'
  | 'productHandle'
  /** A customer's handle. */
  | 'customerHandle'
  | 'taxCode'
  | 'taxCodeId'
  | 'price'
  | 'ledgerAccount'
  | 'accountSet'
  | 'draftInvoice'
  | 'invoiceItem'
  | 'bookedInvoice'
  | 'settlement'
  | 'subscription'
  | 'subscriptionItem'
  | 'usageItem'
  /** An event-based item that bills a billable metric (it takes usage thresholds). */
  | 'meteredItem'
  | 'billingRun'
  /** A billable metric (by id). */
  | 'billableMetric'
  /** A scheduled (prorated) quantity change of a subscription item. */
  | 'scheduledChange'
  /** A customer with credit on its EUR balance (from an over-payment). */
  | 'creditedCustomer'
  | 'webhookEndpoint'
  /** A (test) delivery of a webhook endpoint. */
  | 'webhookDelivery'
  /** A test clock (the matrix's environments are test environments, which may own clocks). */
  | 'testClock';

/** One object of each kind, made once per environment and left alone (requests naming them must fail or not write). */
export type Shared = Record<Target, string>;

export const INVOICE_DATE = '2026-03-01';
/** Subscriptions start then; usage is recorded in their first period, and runs bill as of mid-January. */
export const SUBSCRIPTION_START = '2026-01-01';
export const USAGE_AT = '2026-01-10T00:00:00.000Z';
export const BILLING_AS_OF = '2026-01-15T00:00:00.000Z';

/** Builds environments through the API, the way clients fill them, with rows in every tenant table. */
/** A 1×1 PNG, base64-encoded. */
const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

export function tenantFixtures(t: TestApp) {
  let counter = 0;
  const next = () => ++counter;

  /** Runs `<name>(...)` and returns its payload's object, failing on any userError. */
  async function mutate(
    env: TestEnvironment,
    name: string,
    signature: string,
    args: string,
    object: string,
    selection: string,
    variables: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) {
    const response = await t.graphql(
      `mutation (${signature}) { ${name}(${args}) { ${object} { ${selection} } userErrors { field message code } } }`,
      variables,
      { env, headers },
    );
    expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
    const payload = response.body.data[name];
    expect(payload.userErrors, `${name}: ${JSON.stringify(payload.userErrors)}`).toEqual([]);
    return payload[object];
  }

  async function createTaxCode(env: MarkedEnvironment) {
    const input = { code: `VAT-${env.marker}-${next()}`, rate: 25, description: `Tax ${env.marker}` };
    return mutate(
      env,
      'taxCodeCreate',
      '$input: TaxCodeCreateInput!',
      'input: $input',
      'taxCode',
      'id code',
      {
        input,
      },
    ) as Promise<{ id: string; code: string }>;
  }

  async function createProduct(env: MarkedEnvironment) {
    const n = next();
    const input = {
      name: `Product ${env.marker}`,
      handle: `sku-${env.marker}-${n}`,
      description: env.marker,
    };
    return mutate(
      env,
      'productCreate',
      '$input: ProductCreateInput!',
      'input: $input',
      'product',
      'id handle',
      {
        input,
      },
    ) as Promise<{ id: string; handle: string }>;
  }

  async function createCustomer(env: MarkedEnvironment, headers: Record<string, string> = {}) {
    const input = {
      name: `Customer ${env.marker}`,
      handle: `cus-${env.marker}-${next()}`,
      email: `buyer-${env.marker.toLowerCase()}@example.com`,
      currency: 'EUR',
      paymentTerm: 'net14',
      // A country, so that the booked invoices of the matrix are e-invoices too (EN 16931 BT-55).
      billingAddress: { city: `City ${env.marker}`, postalCode: '10115', country: 'DE' },
    };
    const customer = await mutate(
      env,
      'customerCreate',
      '$input: CustomerCreateInput!',
      'input: $input',
      'customer',
      'id',
      { input },
      headers,
    );
    return customer.id as string;
  }

  async function createLedgerAccount(env: MarkedEnvironment) {
    const input = { name: `Account ${env.marker}`, accountingCode: `${env.marker}-${next()}` };
    const account = await mutate(
      env,
      'ledgerAccountCreate',
      '$input: LedgerAccountCreateInput!',
      'input: $input',
      'ledgerAccount',
      'id',
      { input },
    );
    return account.id as string;
  }

  async function createAccountSet(env: MarkedEnvironment) {
    const [sales, income, tax, deferral] = [
      await createLedgerAccount(env),
      await createLedgerAccount(env),
      await createLedgerAccount(env),
      await createLedgerAccount(env),
    ];
    const response = await t.rest('POST', '/accountsets', {
      env,
      body: {
        name: `Set ${env.marker}`,
        salesAccountId: sales,
        incomeAccountId: income,
        taxAccountId: tax,
        deferralAccountId: deferral,
        recognitionStrategy: 'even_distribution',
      },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body.id as string;
  }

  async function createPrice(env: MarkedEnvironment, body: Record<string, unknown> = priceBody(env)) {
    const response = await t.rest('POST', '/prices', { env, body });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body.id as string;
  }

  /** A draft with one line; returns the invoice and its item. */
  async function createDraft(env: MarkedEnvironment, customerId: string) {
    const response = await t.rest('POST', '/invoices', {
      env,
      body: {
        customerId,
        currency: 'EUR',
        date: INVOICE_DATE,
        memo: `Memo ${env.marker}`,
        items: [{ quantity: 2, unitAmount: 1000, title: `Line ${env.marker}` }],
      },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return { id: response.body.id as string, itemId: response.body.items[0].id as string };
  }

  async function book(env: MarkedEnvironment, id: string) {
    await mutate(env, 'invoiceBook', '$id: UUID!', 'id: $id', 'invoice', 'id', { id });
  }

  /** Settles part of a booked invoice; returns the settlement's id. */
  async function settle(env: MarkedEnvironment, invoiceId: string): Promise<string> {
    const settlement = await mutate(
      env,
      'invoiceSettle',
      '$id: UUID!, $input: InvoiceSettleInput!',
      'id: $id, input: $input',
      'settlement',
      'id',
      { id: invoiceId, input: { amount: 500, date: INVOICE_DATE, reference: `Pay ${env.marker}` } },
    );
    return settlement.id;
  }

  type Item = { id: string; method: string };

  async function subscribe(
    env: MarkedEnvironment,
    customerId: string,
    items: { productId: string; priceId: string; metricCode?: string }[],
  ) {
    const input = {
      customerId,
      handle: `sub-${env.marker}-${next()}`,
      term: { start: SUBSCRIPTION_START },
      items,
    };
    return mutate(
      env,
      'subscriptionCreate',
      '$input: SubscriptionCreateInput!',
      'input: $input',
      'subscription',
      'id items { id method }',
      { input },
    ) as Promise<{ id: string; items: Item[] }>;
  }

  /** Adds an item to the subscription and returns it (ids are time-ordered, so it is the last). */
  async function addItem(env: MarkedEnvironment, subscriptionId: string, shared: Shared) {
    const subscription = await mutate(
      env,
      'subscriptionUpdate',
      '$id: UUID!, $input: SubscriptionUpdateInput!',
      'id: $id, input: $input',
      'subscription',
      'items { id method }',
      { id: subscriptionId, input: { addItems: [{ productId: shared.product, priceId: shared.price }] } },
    );
    return (subscription.items as Item[]).at(-1)?.id as string;
  }

  /** Changes the item's quantity mid-January, prorated; returns the scheduled change. */
  async function changeQuantity(env: MarkedEnvironment, subscriptionId: string, itemId: string) {
    const subscription = await mutate(
      env,
      'subscriptionUpdate',
      '$id: UUID!, $input: SubscriptionUpdateInput!',
      'id: $id, input: $input',
      'subscription',
      'items { id scheduledChanges { id } }',
      { id: subscriptionId, input: { at: '2026-01-20T00:00:00Z', items: [{ id: itemId, quantity: 2 }] } },
    );
    const item = (subscription.items as { id: string; scheduledChanges: { id: string }[] }[]).find(
      (candidate) => candidate.id === itemId,
    );
    return item?.scheduledChanges.at(-1)?.id as string;
  }

  async function recordUsage(env: MarkedEnvironment, subscriptionItemId: string) {
    await mutate(
      env,
      'usageRecord',
      '$subscriptionItemId: UUID!, $quantity: Float!, $timestamp: DateTime!, $idempotencyKey: String!',
      'subscriptionItemId: $subscriptionItemId, quantity: $quantity, timestamp: $timestamp, idempotencyKey: $idempotencyKey',
      'usageRecord',
      'id',
      { subscriptionItemId, quantity: 3, timestamp: USAGE_AT, idempotencyKey: `usage-${next()}` },
    );
  }

  async function runBilling(env: MarkedEnvironment) {
    const run = await mutate(env, 'billingRunCreate', '$asOf: DateTime', 'asOf: $asOf', 'billingRun', 'id', {
      asOf: BILLING_AS_OF,
    });
    return run.id as string;
  }

  /**
   * Fills `env` with one object of each kind (rows in every tenant table: a booked and partly settled
   * invoice, a booked credit note, an over-payment on the customer's balance and a refund of part of it,
   * an idempotency key, the numbering, the audit trail, the ledger with a deferred line, a subscription
   * with usage, a billing run and the period it billed) and returns them.
   */
  async function createMetric(env: MarkedEnvironment) {
    const metric = await mutate(
      env,
      'billableMetricCreate',
      '$input: BillableMetricCreateInput!',
      'input: $input',
      'billableMetric',
      'id code',
      { input: { code: `calls-${env.marker}-${next()}`, name: `Calls ${env.marker}`, aggregation: 'count' } },
    );
    return metric as { id: string; code: string };
  }

  /** A subscription of `customer` whose one item bills the metric `metricCode` at `priceId` (event-based). */
  async function createMeteredItem(
    env: MarkedEnvironment,
    customer: string,
    productId: string,
    priceId: string,
    metricCode: string,
  ): Promise<string> {
    const { items } = await subscribe(env, customer, [{ productId, priceId, metricCode }]);
    return items[0]?.id as string;
  }

  /** The `handle` of the object `field(id:)` answers. */
  async function handleOf(
    env: MarkedEnvironment,
    field: 'customer' | 'invoice',
    id: string,
  ): Promise<string> {
    const response = await t.graphql(`query ($id: UUID!) { ${field}(id: $id) { handle } }`, { id }, { env });
    const handle = response.body.data?.[field]?.handle;
    expect(handle, JSON.stringify(response.body)).toEqual(expect.any(String));
    return handle;
  }

  async function populate(env: MarkedEnvironment): Promise<Shared> {
    const taxCode = await createTaxCode(env);
    const product = await createProduct(env);
    const customer = await createCustomer(env, { 'idempotency-key': `populate-${env.marker}` });
    const draft = await createDraft(env, customer);
    const booked = await createDraft(env, customer);
    await book(env, booked.id);
    const settlement = await settle(env, booked.id);
    const credited = await createDraft(env, customer);
    await book(env, credited.id);
    const creditNote = await mutate(
      env,
      'creditNoteCreate',
      '$invoiceId: UUID!',
      'invoiceId: $invoiceId',
      'creditNote',
      'id',
      { invoiceId: credited.id },
    );
    await book(env, creditNote.id);
    // A subscription with an advance and an event-based item, usage of the latter, and a run that
    // bills the advance item's first period (the usage is billed at the period's end, later).
    const price = await createPrice(env);
    const usagePrice = await createPrice(env, usagePriceBody(env));
    const subscription = await subscribe(env, customer, [
      { productId: product.id, priceId: price },
      { productId: product.id, priceId: usagePrice },
    ]);
    const itemOf = (method: string) =>
      subscription.items.find((item) => item.method === method)?.id as string;
    await recordUsage(env, itemOf('event_based'));
    const billingRun = await runBilling(env);
    // A prorated change of the billed advance item: a scheduled change and its proration lines.
    const scheduledChange = await changeQuantity(env, subscription.id, itemOf('advance'));
    // An over-payment of the credited invoice puts 500 on the customer's balance; a refund takes 100.
    await mutate(
      env,
      'invoiceSettle',
      '$id: UUID!, $input: InvoiceSettleInput!',
      'id: $id, input: $input',
      'invoice',
      'id',
      { id: credited.id, input: { amount: 500, date: INVOICE_DATE } },
    );
    await mutate(
      env,
      'refundCreate',
      '$customerId: UUID!, $input: RefundCreateInput!',
      'customerId: $customerId, input: $input',
      'refund',
      'id',
      { customerId: customer, input: { currency: 'EUR', amount: 100, date: INVOICE_DATE } },
    );
    // Invoice e-mail: the environment's own settings, and a message about the booked invoice as a worker
    // records it.
    await mutate(
      env,
      'emailSettingsUpdate',
      '$input: EmailSettingsUpdateInput!',
      'input: $input',
      'emailSettings',
      'replyTo',
      { input: { replyTo: `billing-${env.marker.toLowerCase()}@example.com` } },
    );
    await t.sql(
      `insert into invoice_email (id, environment_id, invoice_id, kind, sequence, recipient, subject, status,
         created_at, attempted_at, sent_at)
       values ($1, $2, $3, 'invoice', 0, 'buyer@example.com', $4, 'sent', now(), now(), now())`,
      [randomUUID(), env.id, booked.id, `Invoice of ${env.marker}`],
    );
    // The seller profile, with a logo (a row of seller_logo).
    await mutate(
      env,
      'sellerProfileUpdate',
      '$input: SellerProfileUpdateInput!',
      'input: $input',
      'sellerProfile',
      'legalName',
      {
        input: {
          legalName: `Seller ${env.marker}`,
          logo: PNG_1X1,
          // What an EN 16931 e-invoice (and an XRechnung) needs of the seller, so the matrix can fetch
          // its UBL, CII, XRechnung and Factur-X.
          address: { city: `City ${env.marker}`, postalCode: '20457', country: 'DE' },
          vatId: 'DE123456789',
          email: `seller-${env.marker.toLowerCase()}@example.com`,
          phone: '+49 40 1234567',
          iban: 'DE89370400440532013000',
        },
      },
    );
    // The product posts to an account set of its own (a row of product_account_set).
    const accountSet = await createAccountSet(env);
    await mutate(
      env,
      'productAccountSetSet',
      '$productId: UUID!, $accountSetId: UUID',
      'productId: $productId, accountSetId: $accountSetId',
      'product',
      'id',
      { productId: product.id, accountSetId: accountSet },
    );
    // A line of that product with a service period is deferred: rows of its recognition schedule.
    const deferred = await t.rest('POST', '/invoices', {
      env,
      body: {
        customerId: customer,
        currency: 'EUR',
        date: INVOICE_DATE,
        items: [
          {
            quantity: 1,
            unitAmount: 1200,
            title: `Annual ${env.marker}`,
            sku: product.handle,
            periodStart: INVOICE_DATE,
            periodEnd: '2027-03-01',
          },
        ],
      },
    });
    expect(deferred.status, JSON.stringify(deferred.body)).toBe(201);
    await book(env, deferred.body.id);
    const webhookEndpoint = await createWebhookEndpoint(env);
    const webhookDelivery = await createWebhookDelivery(env, webhookEndpoint);
    // An attempt of it, as a worker records it.
    await t.sql(
      `insert into webhook_delivery_attempt (id, environment_id, delivery_id, number, started_at, duration_ms,
         status_code, response_body)
       values ($1, $2, $3, 1, now(), 12, 200, $4)`,
      [randomUUID(), env.id, webhookDelivery, `ok ${env.marker}`],
    );
    // Metering: a billable metric and one usage event of the customer (rows of usage_event and its key).
    const metric = await createMetric(env);
    // A metered item of the customer with a usage threshold of 1, which the event below crosses.
    const meteredItem = await createMeteredItem(env, customer, product.id, usagePrice, metric.code);
    await mutate(
      env,
      'usageThresholdCreate',
      '$input: UsageThresholdCreateInput!',
      'input: $input',
      'usageThreshold',
      'id',
      { input: { subscriptionItemId: meteredItem, kind: 'usage', value: 1 } },
    );
    const ingested = await t.rest('POST', '/events', {
      env,
      body: {
        events: [
          {
            transactionId: `populate-${env.marker}`,
            customer,
            metric: metric.code,
            timestamp: USAGE_AT,
          },
        ],
      },
    });
    expect(ingested.body.accepted, JSON.stringify(ingested.body)).toBe(1);
    await mutate(
      env,
      'meteringSettingsUpdate',
      '$input: MeteringSettingsUpdateInput!',
      'input: $input',
      'meteringSettings',
      'lateEvents',
      { input: { gracePeriodHours: 1 } },
    );
    // An adjustment late events left for the usage item's next bill, as ingestion records it.
    await t.sql(
      `insert into usage_adjustment (id, environment_id, subscription_item_id, period_start, period_end, created_at)
       values ($1, $2, $3, '2026-01-01', '2026-02-01', now())`,
      [randomUUID(), env.id, itemOf('event_based')],
    );
    return {
      customer,
      product: product.id,
      productHandle: product.handle,
      customerHandle: await handleOf(env, 'customer', customer),
      taxCode: taxCode.code,
      taxCodeId: taxCode.id,
      price,
      ledgerAccount: await createLedgerAccount(env),
      accountSet,
      draftInvoice: draft.id,
      invoiceItem: draft.itemId,
      bookedInvoice: booked.id,
      settlement,
      subscription: subscription.id,
      subscriptionItem: itemOf('advance'),
      usageItem: itemOf('event_based'),
      meteredItem,
      billingRun,
      scheduledChange,
      creditedCustomer: customer,
      webhookEndpoint,
      webhookDelivery,
      billableMetric: metric.id,
      testClock: await createTestClock(env, true),
    };
  }

  async function createWebhookEndpoint(env: MarkedEnvironment): Promise<string> {
    // A host that does not resolve here: taken when saved (every delivery checks it again).
    const input = {
      url: `https://hooks-${env.marker}-${next()}.example.invalid/billing`,
      description: env.marker,
    };
    return (
      await mutate(
        env,
        'webhookEndpointCreate',
        '$input: WebhookEndpointCreateInput!',
        'input: $input',
        'webhookEndpoint',
        'id',
        { input },
      )
    ).id;
  }

  /** A test clock, and a customer attached to it (the customer.test_clock_id column). */
  async function createTestClock(env: MarkedEnvironment, withCustomer = false): Promise<string> {
    const clock = await mutate(
      env,
      'testClockCreate',
      '$input: TestClockCreateInput!',
      'input: $input',
      'testClock',
      'id',
      { input: { name: `Clock ${env.marker} ${next()}`, frozenTime: BILLING_AS_OF } },
    );
    if (withCustomer) {
      await mutate(env, 'customerCreate', '$input: CustomerCreateInput!', 'input: $input', 'customer', 'id', {
        input: { name: `Clocked ${env.marker}`, currency: 'EUR', testClockId: clock.id },
      });
    }
    return clock.id;
  }

  async function createWebhookDelivery(env: MarkedEnvironment, endpointId: string): Promise<string> {
    return (
      await mutate(env, 'webhookEndpointSendTest', '$id: UUID!', 'id: $id', 'webhookDelivery', 'id', {
        id: endpointId,
      })
    ).id;
  }

  /** A new object of `kind` in `env`, for a request that may change or consume it. */
  async function create(kind: Target, env: MarkedEnvironment, shared: Shared): Promise<string> {
    switch (kind) {
      case 'customer':
        return createCustomer(env);
      case 'product':
        return (await createProduct(env)).id;
      case 'productHandle':
        return (await createProduct(env)).handle;
      case 'customerHandle':
        return handleOf(env, 'customer', await createCustomer(env));
      case 'taxCode':
        return (await createTaxCode(env)).code;
      case 'taxCodeId':
        return (await createTaxCode(env)).id;
      case 'price':
        return createPrice(env);
      case 'ledgerAccount':
        return createLedgerAccount(env);
      case 'accountSet':
        return createAccountSet(env);
      case 'draftInvoice':
        return (await createDraft(env, shared.customer)).id;
      case 'invoiceItem':
        return (await createDraft(env, shared.customer)).itemId;
      case 'bookedInvoice': {
        const { id } = await createDraft(env, shared.customer);
        await book(env, id);
        return id;
      }
      case 'settlement': {
        const { id } = await createDraft(env, shared.customer);
        await book(env, id);
        return settle(env, id);
      }
      case 'subscription':
        return (await subscribe(env, shared.customer, [{ productId: shared.product, priceId: shared.price }]))
          .id;
      case 'subscriptionItem':
        // An item of the shared subscription: requests name it together with that subscription.
        return addItem(env, shared.subscription, shared);
      case 'usageItem': {
        const usagePrice = await createPrice(env, usagePriceBody(env));
        const { items } = await subscribe(env, shared.customer, [
          { productId: shared.product, priceId: usagePrice },
        ]);
        return items[0]?.id as string;
      }
      case 'meteredItem': {
        const usagePrice = await createPrice(env, usagePriceBody(env));
        const metric = await createMetric(env);
        return createMeteredItem(env, shared.customer, shared.product, usagePrice, metric.code);
      }
      case 'billingRun':
        return runBilling(env);
      case 'billableMetric':
        return (await createMetric(env)).id;
      case 'scheduledChange': {
        const { id, items } = await subscribe(env, shared.customer, [
          { productId: shared.product, priceId: shared.price },
        ]);
        return changeQuantity(env, id, items[0]?.id as string);
      }
      case 'creditedCustomer': {
        const customer = await createCustomer(env);
        const { id } = await createDraft(env, customer);
        await book(env, id);
        await mutate(
          env,
          'invoiceSettle',
          '$id: UUID!, $input: InvoiceSettleInput!',
          'id: $id, input: $input',
          'invoice',
          'id',
          { id, input: { amount: 2500, date: INVOICE_DATE } },
        );
        return customer;
      }
      case 'webhookEndpoint':
        return createWebhookEndpoint(env);
      case 'webhookDelivery':
        return createWebhookDelivery(env, shared.webhookEndpoint);
      case 'testClock':
        return createTestClock(env);
    }
  }

  async function createEnvironment(name: string): Promise<MarkedEnvironment> {
    // Test environments: they hold every kind of object, test clocks too.
    const env = await t.createEnvironment(name, { kind: 'test' });
    return { ...env, marker: `mk${randomBytes(4).toString('hex')}` };
  }

  return { createEnvironment, populate, create };
}

export const priceBody = (env: MarkedEnvironment) => ({
  name: `Price ${env.marker}`,
  description: env.marker,
  termUnit: 'month',
  termCount: 1,
  purchase: 'recurring',
  priceModel: 'fee',
  method: 'advance',
  pricing: { eur: { amount: 1999 } },
});

/** A price billed by recorded usage, at the end of each monthly period. */
export const usagePriceBody = (env: MarkedEnvironment) => ({
  ...priceBody(env),
  name: `Usage ${env.marker}`,
  method: 'event_based',
  pricing: { eur: { amount: 25 } },
});

/** Every table that holds tenant rows: those with an environment_id column. */
export async function tenantTables(t: TestApp): Promise<string[]> {
  const rows = await t.sql<{ table_name: string }>(
    `select c.table_name from information_schema.columns c
     join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
     where c.table_schema = 'public' and c.column_name = 'environment_id' and t.table_type = 'BASE TABLE'
       -- A partition (of usage_event) is reached only through its parent, which is listed.
       and not exists (select from pg_class p where p.oid = format('%I', c.table_name)::regclass and p.relispartition)
     order by c.table_name`,
  );
  return rows.map((row) => row.table_name);
}
