/**
 * The raw baseline of the benchmark: the SQL work of the measured endpoints on `node:http` and `pg`
 * with prepared statements, and nothing else (no framework, no ORM, no validation library, no
 * GraphQL execution). It reads and writes the same tables in the same transactions as the service,
 * audit events and the events the outbox publishes included, under the same row-level security (connections act as the application role,
 * each request's work is one transaction that first sets its environment), and answers the same
 * JSON, so the service's figures divided by these show what the stack costs. Only the requests the benchmark sends are served; it is not an API.
 *
 *   DATABASE_URL=... PORT=... node bench/baseline-server.ts
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { v7 as newId } from 'uuid';
import { APP_ROLE } from '../src/db/orm.ts';
import { ENVIRONMENT_SETTING } from '../src/db/tenant-transaction.ts';
import {
  computeLine,
  invoiceTotals,
  settlementStatus,
  totalDue,
} from '../src/modules/invoice/invoice.arithmetic.ts';

// biome-ignore lint/suspicious/noExplicitAny: rows and bodies are untyped JSON and SQL results here
type Row = Record<string, any>;
type Auth = { tokenId: string; environmentId: string };
type Reply = { status: number; body: unknown; headers?: Record<string, string> };

const ADDRESS_FIELDS = ['street1', 'street2', 'postalCode', 'city', 'county', 'country', 'state'] as const;

const INVOICE_COLUMNS = `id, type, status, handle, customer_id, customer_snapshot, currency, date, due_date, memo,
  total_excl_vat, total_vat, total_incl_vat, settled_amount, settlement_status, created_at, updated_at`;
const ITEM_COLUMNS = `id, invoice_id, quantity, unit_amount, sku, title, description, period_start, period_end,
  tax_code, tax_rate, discount_percentage, discount_amount, amount, tax_amount`;
const CUSTOMER_COLUMNS = `id, name, handle, email, currency, payment_term, collection_mode, billing_address,
  created_at, updated_at`;

/** Every statement, named so that each connection prepares it once and then only binds and executes. */
const SQL = {
  token: 'select id, environment_ids from api_token where secret_hash = $1 and revoked_at is null',
  customer: `select ${CUSTOMER_COLUMNS} from customer where environment_id = $1 and id = $2`,
  customers: `select ${CUSTOMER_COLUMNS} from customer where environment_id = $1 and id = any($2::uuid[])`,
  taxCodes: 'select code, rate from tax_code where environment_id = $1 and code = any($2::text[])',
  invoice: `select ${INVOICE_COLUMNS} from invoice where environment_id = $1 and id = $2`,
  invoicePage: `select ${INVOICE_COLUMNS} from invoice where environment_id = $1 order by id limit $2`,
  items: `select ${ITEM_COLUMNS} from invoice_item
    where environment_id = $1 and invoice_id = any($2::uuid[]) order by id`,
  settlements: `select id, invoice_id, date, amount, reference, note from settlement
    where environment_id = $1 and invoice_id = any($2::uuid[]) order by id`,
  itemsOfOne: `select ${ITEM_COLUMNS} from invoice_item where environment_id = $1 and invoice_id = $2 order by id`,
  settlementsOfOne: `select id, invoice_id, date, amount, reference, note from settlement
    where environment_id = $1 and invoice_id = $2 order by id`,
  insertInvoice: `insert into invoice (id, environment_id, type, status, handle, customer_id, customer_snapshot,
      credited_invoice_id, currency, date, due_date, memo, total_excl_vat, total_vat, total_incl_vat,
      settled_amount, settlement_status, created_at)
    values ($1, $2, 'invoice', 'draft', null, $3, null, null, $4, $5, $6, $7, $8, $9, $10, 0, $11, $12)`,
  insertItems: `insert into invoice_item (id, environment_id, invoice_id, credited_item_id, quantity, unit_amount,
      sku, title, description, period_start, period_end, tax_code, tax_rate, discount_percentage,
      discount_amount, amount, tax_amount, created_at)
    select id, $1, $2, null, quantity, unit_amount, sku, title, description, period_start, period_end, tax_code,
      tax_rate, discount_percentage, discount_amount, amount, tax_amount, $3
    from unnest($4::uuid[], $5::numeric[], $6::numeric[], $7::text[], $8::text[], $9::text[], $10::date[],
      $11::date[], $12::text[], $13::numeric[], $14::numeric[], $15::numeric[], $16::bigint[], $17::bigint[])
      as item(id, quantity, unit_amount, sku, title, description, period_start, period_end, tax_code, tax_rate,
        discount_percentage, discount_amount, amount, tax_amount)`,
  insertAudit: `insert into audit_event (id, environment_id, token_id, operation, action, object_type, object_id,
      changed_fields, occurred_at)
    select id, $1, $2, $3, action, object_type, object_id, string_to_array(changed_fields, ','), $4
    from unnest($5::uuid[], $6::text[], $7::text[], $8::text[], $9::text[])
      as event(id, action, object_type, object_id, changed_fields)`,
  insertEvent: `insert into event (id, environment_id, type, object_type, object_id, data, created_at)
    values ($1, $2, $3, $4, $5, $6, $7)`,
  updateCustomer: `update customer set name = $3, company_name = $4, handle = $5, email = $6, currency = $7,
      updated_at = $8
    where environment_id = $1 and id = $2`,
} as const;

type Statement = keyof typeof SQL;

const SET_ENVIRONMENT = `select set_config('${ENVIRONMENT_SETTING}', $1, true)`;

/** Runs a named statement on the request's transaction. */
type Db = (statement: Statement, values: unknown[]) => Promise<Row[]>;

/** Dates stay `YYYY-MM-DD` and int8 amounts become numbers, as the service maps them. */
const types = new pg.TypeOverrides();
types.setTypeParser(pg.types.builtins.DATE, (value) => value);
types.setTypeParser(pg.types.builtins.INT8, Number);

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

const problem = (status: number, detail: string): Reply => ({
  status,
  body: { title: detail, status, detail },
  headers: { 'content-type': 'application/problem+json' },
});

const address = (value: Row | null) =>
  Object.fromEntries(ADDRESS_FIELDS.map((field) => [field, value?.[field] ?? null]));

const dueDateFromTerm = (date: string, term: string | null): string | null => {
  const days = term ? /^net(\d+)$/.exec(term)?.[1] : undefined;
  if (days === undefined) return null;
  const due = new Date(`${date}T00:00:00Z`);
  due.setUTCDate(due.getUTCDate() + Number(days));
  return due.toISOString().slice(0, 10);
};

const cursorOf = (id: string) => Buffer.from(id).toString('base64url');

export class Baseline {
  private readonly pool: pg.Pool;

  constructor(databaseUrl: string, poolMax = 10) {
    this.pool = new pg.Pool({
      connectionString: databaseUrl,
      max: poolMax,
      types,
      // As the service's connections: the application role, held to row-level security.
      onConnect: async (client: pg.ClientBase) => {
        await client.query(`set role ${pg.escapeIdentifier(APP_ROLE)}`);
      },
    });
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  private async query(statement: Statement, values: unknown[], client?: pg.PoolClient): Promise<Row[]> {
    const result = await (client ?? this.pool).query({ name: statement, text: SQL[statement], values });
    return result.rows;
  }

  private async authorize(request: IncomingMessage): Promise<Auth> {
    const environmentId = String(request.headers['x-environment'] ?? '').toLowerCase();
    const secret = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
    if (!secret) throw new HttpError(401, 'no token');
    const hash = createHash('sha256').update(secret).digest('hex');
    const [token] = await this.query('token', [hash]);
    if (!token) throw new HttpError(401, 'unknown token');
    if (!token.environment_ids.includes(environmentId)) throw new HttpError(403, 'forbidden');
    return { tokenId: token.id, environmentId };
  }

  /** One transaction in the environment, as the service's: begin, set_config, the work, commit. */
  private async inEnvironment<T>(environmentId: string, work: (db: Db) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('begin');
      await client.query({ name: 'environment', text: SET_ENVIRONMENT, values: [environmentId] });
      const result = await work((statement, values) => this.query(statement, values, client));
      await client.query('commit');
      return result;
    } catch (error) {
      await client.query('rollback').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async handle(request: IncomingMessage, text: string): Promise<Reply> {
    const url = new URL(request.url ?? '/', 'http://baseline');
    const auth = await this.authorize(request);
    const [, collection, id] = url.pathname.split('/');
    const inEnvironment = (work: (db: Db) => Promise<Reply>) => this.inEnvironment(auth.environmentId, work);
    if (request.method === 'POST' && url.pathname === '/invoices') {
      const body = JSON.parse(text);
      return inEnvironment((db) => this.createInvoice(db, auth, body));
    }
    if (request.method === 'GET' && collection === 'invoices' && id) {
      return inEnvironment((db) => this.readInvoice(db, auth, id));
    }
    if (request.method === 'PATCH' && collection === 'customers' && id) {
      const body = JSON.parse(text);
      return inEnvironment((db) => this.updateCustomer(db, auth, id, body));
    }
    if (request.method === 'POST' && url.pathname === '/graphql') {
      const { operationName, variables } = JSON.parse(text);
      if (operationName === 'InvoicePage')
        return inEnvironment((db) => this.invoicePage(db, auth, variables.first));
      if (operationName === 'CustomerById')
        return inEnvironment((db) => this.customerById(db, auth, variables.id));
    }
    return problem(404, 'not served by the baseline');
  }

  private async createInvoice(db: Db, auth: Auth, body: Row): Promise<Reply> {
    const { environmentId, tokenId } = auth;
    const [customer] = await db('customer', [environmentId, body.customerId]);
    if (!customer) return problem(422, 'unknown customer');
    const currency = (body.currency ?? customer.currency)?.toUpperCase();
    if (!currency) return problem(422, 'no currency');
    const codes = [
      ...new Set((body.items ?? []).flatMap((item: Row) => (item.taxCode ? [item.taxCode] : []))),
    ];
    const rates = new Map(
      (codes.length > 0 ? await db('taxCodes', [environmentId, codes]) : []).map((row) => [
        row.code,
        row.rate,
      ]),
    );
    const items = (body.items ?? []).map((item: Row) => {
      if (item.taxCode && !rates.has(item.taxCode)) throw new HttpError(422, 'unknown tax code');
      const fields = {
        id: newId(),
        quantity: String(item.quantity),
        unitAmount: String(item.unitAmount),
        sku: item.sku ?? null,
        title: item.title,
        description: item.description ?? null,
        periodStart: item.periodStart ?? null,
        periodEnd: item.periodEnd ?? null,
        taxCode: item.taxCode ?? null,
        taxRate: item.taxCode ? (rates.get(item.taxCode) as string) : null,
        discountPercentage: String(item.discount?.percentage ?? 0),
        discountAmount: String(item.discount?.amount ?? 0),
      };
      return { ...fields, ...computeLine(fields) };
    });
    const totals = invoiceTotals(items);
    const invoice = {
      id: newId(),
      currency,
      date: body.date as string,
      dueDate: body.dueDate ?? dueDateFromTerm(body.date, customer.payment_term),
      memo: body.memo ?? null,
      status: settlementStatus(totals.totalInclVat, 0),
      createdAt: new Date(),
    };
    const column = (key: string) => items.map((item: Row) => item[key]);
    await db('insertInvoice', [
      invoice.id,
      environmentId,
      customer.id,
      currency,
      invoice.date,
      invoice.dueDate,
      invoice.memo,
      totals.totalExclVat,
      totals.totalVat,
      totals.totalInclVat,
      invoice.status,
      invoice.createdAt,
    ]);
    if (items.length > 0) {
      await db('insertItems', [
        environmentId,
        invoice.id,
        invoice.createdAt,
        column('id'),
        column('quantity'),
        column('unitAmount'),
        column('sku'),
        column('title'),
        column('description'),
        column('periodStart'),
        column('periodEnd'),
        column('taxCode'),
        column('taxRate'),
        column('discountPercentage'),
        column('discountAmount'),
        column('amount'),
        column('taxAmount'),
      ]);
    }
    const objects = [['Invoice', invoice.id], ...items.map((item: Row) => ['InvoiceItem', item.id])];
    await db('insertAudit', [
      environmentId,
      tokenId,
      'POST /invoices',
      invoice.createdAt,
      objects.map(() => newId()),
      objects.map(() => 'create'),
      objects.map(([type]) => type),
      objects.map(([, id]) => id),
      objects.map(() => ''),
    ]);
    const answer = {
      id: invoice.id,
      handle: null,
      type: 'invoice',
      status: 'draft',
      settlementStatus: invoice.status,
      currency,
      createdAt: invoice.createdAt.toISOString(),
      updatedAt: null,
      customer: {
        id: customer.id,
        handle: customer.handle,
        name: customer.name,
        billingAddress: address(customer.billing_address),
      },
      memo: invoice.memo,
      date: invoice.date,
      dueDate: invoice.dueDate,
      items: items.map((item: Row) => ({
        id: item.id,
        quantity: Number(item.quantity),
        unitAmount: Number(item.unitAmount),
        sku: item.sku,
        title: item.title,
        description: item.description,
        periodStart: item.periodStart,
        periodEnd: item.periodEnd,
        amount: item.amount,
        taxAmount: item.taxAmount,
        tax: {
          taxable: item.taxCode !== null,
          taxCode: item.taxCode,
          taxRate: item.taxRate === null ? null : Number(item.taxRate),
        },
        discount: { percentage: Number(item.discountPercentage), amount: Number(item.discountAmount) },
      })),
      settlements: [],
      ...totals,
      totalDue: totals.totalInclVat,
    };
    // As the service: the invoice.created event carries the answer.
    await this.recordEvent(
      db,
      environmentId,
      'invoice.created',
      'Invoice',
      invoice.id,
      answer,
      invoice.createdAt,
    );
    return { status: 201, headers: { location: `/invoices/${invoice.id}` }, body: answer };
  }

  private async recordEvent(
    db: Db,
    environmentId: string,
    type: string,
    objectType: string,
    objectId: string,
    data: unknown,
    createdAt: Date,
  ): Promise<void> {
    await db('insertEvent', [
      newId(),
      environmentId,
      type,
      objectType,
      objectId,
      JSON.stringify(data),
      createdAt,
    ]);
  }

  /** The customers the invoices show (their snapshot once booked), their items and settlements. */
  private async invoiceParts(db: Db, environmentId: string, invoices: Row[]) {
    const ids = invoices.map((invoice) => invoice.id);
    const live = [
      ...new Set(invoices.flatMap((invoice) => (invoice.customer_snapshot ? [] : [invoice.customer_id]))),
    ];
    // One invoice's parts by plain equality, a page's by = any: what a careful hand-written query does.
    const [customers, items, settlements] = await Promise.all([
      live.length === 0
        ? []
        : live.length === 1
          ? db('customer', [environmentId, live[0]])
          : db('customers', [environmentId, live]),
      ids.length === 1 ? db('itemsOfOne', [environmentId, ids[0]]) : db('items', [environmentId, ids]),
      ids.length === 1
        ? db('settlementsOfOne', [environmentId, ids[0]])
        : db('settlements', [environmentId, ids]),
    ]);
    const customerById = new Map(customers.map((customer) => [customer.id, customer]));
    const group = (rows: Row[]) => {
      const byInvoice = new Map<string, Row[]>(ids.map((id) => [id, []]));
      for (const row of rows) byInvoice.get(row.invoice_id)?.push(row);
      return byInvoice;
    };
    return {
      customerOf: (invoice: Row): Row =>
        invoice.customer_snapshot ?? customerById.get(invoice.customer_id) ?? {},
      items: group(items),
      settlements: group(settlements),
    };
  }

  private async readInvoice(db: Db, auth: Auth, id: string): Promise<Reply> {
    const [invoice] = await db('invoice', [auth.environmentId, id]);
    if (!invoice) return problem(404, 'no such invoice');
    const parts = await this.invoiceParts(db, auth.environmentId, [invoice]);
    const customer = parts.customerOf(invoice);
    return {
      status: 200,
      body: {
        id: invoice.id,
        handle: invoice.handle,
        type: invoice.type,
        status: invoice.status,
        settlementStatus: invoice.settlement_status,
        currency: invoice.currency,
        createdAt: invoice.created_at.toISOString(),
        updatedAt: invoice.updated_at?.toISOString() ?? null,
        customer: {
          id: customer.id,
          handle: customer.handle ?? null,
          name: customer.name,
          billingAddress: address(customer.billing_address ?? customer.billingAddress),
        },
        memo: invoice.memo,
        date: invoice.date,
        dueDate: invoice.due_date,
        items: (parts.items.get(invoice.id) ?? []).map((item) => ({
          id: item.id,
          quantity: Number(item.quantity),
          unitAmount: Number(item.unit_amount),
          sku: item.sku,
          title: item.title,
          description: item.description,
          periodStart: item.period_start,
          periodEnd: item.period_end,
          amount: item.amount,
          taxAmount: item.tax_amount,
          tax: {
            taxable: item.tax_code !== null,
            taxCode: item.tax_code,
            taxRate: item.tax_rate === null ? null : Number(item.tax_rate),
          },
          discount: { percentage: Number(item.discount_percentage), amount: Number(item.discount_amount) },
        })),
        settlements: (parts.settlements.get(invoice.id) ?? []).map((settlement) => ({
          date: settlement.date,
          amount: settlement.amount,
          reference: settlement.reference,
          note: settlement.note,
        })),
        totalExclVat: invoice.total_excl_vat,
        totalVat: invoice.total_vat,
        totalInclVat: invoice.total_incl_vat,
        totalDue: totalDue(invoice.total_incl_vat, invoice.settled_amount),
      },
    };
  }

  private async updateCustomer(db: Db, auth: Auth, id: string, body: Row): Promise<Reply> {
    const { environmentId, tokenId } = auth;
    const [customer] = await db('customer', [environmentId, id]);
    if (!customer) return problem(404, 'no such customer');
    const before = { ...customer };
    for (const [field, column] of [
      ['name', 'name'],
      ['companyName', 'company_name'],
      ['handle', 'handle'],
      ['email', 'email'],
      ['currency', 'currency'],
    ] as const) {
      if (body[field] !== undefined) customer[column] = body[field];
    }
    customer.updated_at = new Date();
    const changed = ['name', 'company_name', 'handle', 'email', 'currency', 'updated_at']
      .filter((column) => customer[column] !== before[column])
      .map((column) => column.replace(/_(\w)/g, (_, letter: string) => letter.toUpperCase()))
      .sort();
    await db('updateCustomer', [
      environmentId,
      id,
      customer.name,
      customer.company_name,
      customer.handle,
      customer.email,
      customer.currency,
      customer.updated_at,
    ]);
    await db('insertAudit', [
      environmentId,
      tokenId,
      'PATCH /customers/{customerId}',
      customer.updated_at,
      [newId()],
      ['update'],
      ['Customer'],
      [id],
      [changed.join(',')],
    ]);
    const answer = this.customerBody(customer);
    await this.recordEvent(
      db,
      environmentId,
      'customer.updated',
      'Customer',
      id,
      answer,
      customer.updated_at,
    );
    return { status: 200, body: answer };
  }

  private customerBody(customer: Row) {
    return {
      id: customer.id,
      name: customer.name,
      handle: customer.handle,
      createdAt: customer.created_at.toISOString(),
      updatedAt: customer.updated_at?.toISOString() ?? null,
      billingAddress: address(customer.billing_address),
      paymentTerm: customer.payment_term,
      email: customer.email,
      currency: customer.currency,
      collectionMode: customer.collection_mode,
    };
  }

  /** The data of bench/scenarios.ts's InvoicePage query, field for field. */
  private async invoicePage(db: Db, auth: Auth, first: number): Promise<Reply> {
    const rows = await db('invoicePage', [auth.environmentId, first + 1]);
    const invoices = rows.slice(0, first);
    const parts = await this.invoiceParts(db, auth.environmentId, invoices);
    const edges = invoices.map((invoice) => {
      const customer = parts.customerOf(invoice);
      const billingAddress = customer.billing_address ?? customer.billingAddress ?? {};
      return {
        node: {
          id: invoice.id,
          handle: invoice.handle,
          status: invoice.status,
          settlementStatus: invoice.settlement_status,
          currency: invoice.currency,
          date: invoice.date,
          totalInclVat: invoice.total_incl_vat,
          totalDue: totalDue(invoice.total_incl_vat, invoice.settled_amount),
          customerId: invoice.customer_id,
          customer: {
            name: customer.name,
            billingAddress: { city: billingAddress.city ?? null, country: billingAddress.country ?? null },
          },
          items: (parts.items.get(invoice.id) ?? []).map((item) => ({
            id: item.id,
            title: item.title,
            quantity: Number(item.quantity),
            unitAmount: Number(item.unit_amount),
            amount: item.amount,
            taxAmount: item.tax_amount,
            tax: { taxRate: item.tax_rate === null ? null : Number(item.tax_rate) },
          })),
          settlements: (parts.settlements.get(invoice.id) ?? []).map((settlement) => ({
            date: settlement.date,
            amount: settlement.amount,
            reference: settlement.reference,
          })),
        },
      };
    });
    const last = invoices.at(-1);
    return {
      status: 200,
      body: {
        data: {
          invoices: {
            edges,
            pageInfo: { hasNextPage: rows.length > first, endCursor: last ? cursorOf(last.id) : null },
          },
        },
      },
    };
  }

  /** The data of bench/scenarios.ts's CustomerById query. */
  private async customerById(db: Db, auth: Auth, id: string): Promise<Reply> {
    const [customer] = await db('customer', [auth.environmentId, id]);
    if (!customer) return { status: 200, body: { data: { customer: null } } };
    const { paymentTerm, ...body } = this.customerBody(customer);
    return { status: 200, body: { data: { customer: { ...body, paymentTerm } } } };
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function createBaselineServer(baseline: Baseline): Server {
  return createServer(async (request: IncomingMessage, response: ServerResponse) => {
    let reply: Reply;
    try {
      reply = await baseline.handle(request, await readBody(request));
    } catch (error) {
      reply =
        error instanceof HttpError
          ? problem(error.status, error.message)
          : problem(500, error instanceof Error ? error.message : String(error));
    }
    response.writeHead(reply.status, {
      'content-type': 'application/json; charset=utf-8',
      ...reply.headers,
    });
    response.end(JSON.stringify(reply.body));
  });
}

// Run as a script (import.meta.main would do, but only from Node 22.18/24.2 on).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is required');
  const baseline = new Baseline(databaseUrl, Number(process.env.DB_POOL_MAX ?? 10));
  const server = createBaselineServer(baseline);
  server.listen(Number(process.env.PORT ?? 4100), '127.0.0.1', () => {
    console.log(`baseline listening on ${JSON.stringify(server.address())}`);
  });
  process.on('SIGTERM', () => {
    server.close();
    server.closeIdleConnections();
    void baseline.close().then(() => process.exit(0));
  });
}
