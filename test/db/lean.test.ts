import { randomUUID } from 'node:crypto';
import type { EntityName } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { ApiTokenSchema } from '../../src/auth/api-token.entity.ts';
import { findManaged, jsonShape, leanFind, leanSelect, tableOf } from '../../src/db/lean.ts';
import { ENVIRONMENT_SETTING, inEnvironment } from '../../src/db/tenant-transaction.ts';
import { CustomerSchema } from '../../src/modules/customer/customer.entity.ts';
import {
  InvoiceItemSchema,
  InvoiceSchema,
  SettlementSchema,
} from '../../src/modules/invoice/invoice.entity.ts';
import { TaxCodeSchema } from '../../src/modules/tax/tax-code.entity.ts';
import { invoiceFixtures } from '../invoice/fixtures.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';

const t = setupTestApp();
const f = invoiceFixtures(t);

describe('lean reads', () => {
  let env: TestEnvironment;
  let invoiceId: string;

  beforeAll(async () => {
    // given a booked, partly settled invoice with taxed, discounted and fractional lines
    env = await t.createEnvironment('Lean');
    await f.createTaxCode(env, 'VAT7.5', '7.5');
    const customerId = await f.createCustomer(env, {
      handle: 'lean',
      paymentTerm: 'net14',
      billingAddress: { street1: '1 Way', city: 'Ghent' },
    });
    const invoice = await f.createInvoice(env, {
      customerId,
      currency: 'EUR',
      memo: 'Lean',
      items: [
        { quantity: 1.5, unitAmount: 0.25, title: 'Calls', taxCode: 'VAT7.5' },
        { quantity: 2, unitAmount: 1999, title: 'Seats', discount: { percentage: 12.5, amount: 3 } },
      ],
    });
    invoiceId = invoice.id;
    await f.gql(env, 'mutation ($id: UUID!) { invoiceBook(id: $id) { userErrors { message } } }', {
      id: invoiceId,
    });
    await f.gql(
      env,
      `mutation ($id: UUID!) { invoiceSettle(id: $id, input: { date: "2026-03-02", amount: 100 }) {
        userErrors { message } } }`,
      { id: invoiceId },
    );
  });

  /** Work as the application does it: in the environment's transaction, under row-level security. */
  const inEnv = <T>(work: (em: EntityManager) => Promise<T>) => inEnvironment(t.orm.em, env.id, work);

  async function bothWays<T extends object>(entity: EntityName<T>, where: Record<string, unknown>) {
    const managed = await inEnv((em) => em.find(entity, where as never, { orderBy: { id: 'asc' } as never }));
    const lean = await inEnv((em) => leanFind(em, entity, where as never, { orderBy: 'id' as never }));
    return { managed: managed.map((row) => ({ ...row })), lean };
  }

  it.each([
    ['invoice', InvoiceSchema, () => ({ id: invoiceId })],
    ['invoice items', InvoiceItemSchema, () => ({ invoiceId })],
    ['settlements', SettlementSchema, () => ({ invoiceId })],
    ['customers', CustomerSchema, () => ({ environmentId: env.id })],
    ['tax codes', TaxCodeSchema, () => ({ environmentId: env.id })],
  ] as const)('reads %s with the values em.find gives', async (_name, entity, where) => {
    // when the same rows are read both ways
    const { managed, lean } = await bothWays(entity as EntityName<object>, where());

    // then they carry the same properties and values: numbers, exact decimals, dates, JSON
    expect(lean.length).toBeGreaterThan(0);
    expect(lean).toEqual(managed);
  });

  it.each([
    ['invoice', InvoiceSchema, () => ({ id: invoiceId })],
    ['invoice items', InvoiceItemSchema, () => ({ invoiceId })],
    ['settlements', SettlementSchema, () => ({ invoiceId })],
    ['customers', CustomerSchema, () => ({ environmentId: env.id })],
    ['tax codes', TaxCodeSchema, () => ({ environmentId: env.id })],
  ] as const)(
    'reads %s as JSON built in SQL with the values leanFind gives',
    async (_name, entity, where) => {
      // when the same rows are read by leanFind and as JSON objects PostgreSQL builds (jsonShape)
      const name = entity as EntityName<object>;
      const lean = await inEnv((em) => leanFind(em, name, where() as never, { orderBy: 'id' as never }));
      const json = await inEnv((em) => {
        const shape = jsonShape(em, name);
        const select = `${shape.object(tableOf(em, name))} as "row"`;
        return leanSelect(em, name, where() as never, { orderBy: 'id' as never, select }, (row) =>
          shape.revive(row.row as unknown[]),
        );
      });

      // then they are the same rows: every property, the same types (Date, exact decimal text, numbers), frozen
      expect(lean.length).toBeGreaterThan(0);
      expect(json).toStrictEqual(lean);
      expect(json.every((row) => Object.isFrozen(row))).toBe(true);
    },
  );

  it('reads array columns, matches null and any of a list, limits', async () => {
    // when the token is looked up as authentication does
    const hashes = await t.sql<{ secret_hash: string }>('select secret_hash from api_token');
    const tokens = await leanFind(
      t.orm.em.fork(),
      ApiTokenSchema,
      { secretHash: hashes.map((row) => row.secret_hash), revokedAt: null },
      { limit: 1 },
    );

    // then one comes back, its environments as an array of ids
    expect(tokens).toHaveLength(1);
    expect(tokens[0]?.environmentIds).toEqual([expect.any(String)]);
  });

  it('matches ranges and refuses what it cannot express', () =>
    inEnv(async (em) => {
      const on = (from: string, to: string) =>
        leanFind(em, InvoiceSchema, { environmentId: env.id, date: { $gte: from, $lte: to } });

      expect((await on('2026-03-01', '2026-03-01')).map((invoice) => invoice.id)).toEqual([invoiceId]);
      expect(await on('2026-03-02', '2026-12-31')).toEqual([]);
      expect(await leanFind(em, InvoiceSchema, { environmentId: env.id, id: { $gt: invoiceId } })).toEqual(
        [],
      );
      await expect(leanFind(em, InvoiceSchema, { memo: { $like: 'L%' } } as never)).rejects.toThrow(/\$like/);
      await expect(leanFind(em, InvoiceSchema, { nothing: 1 } as never)).rejects.toThrow(/no column/);
    }));

  it('gives managed entities whose changes flush', async () => {
    // given a customer loaded as a managed entity, when it is changed and flushed
    const customer = await inEnv(async (em) => {
      const [found] = await findManaged(em, CustomerSchema, { environmentId: env.id, handle: 'lean' });
      Object.assign(found as object, { name: 'Changed through findManaged' });
      await em.flush();
      return found;
    });

    // then the database has the change
    const rows = await t.sql('select name from customer where id = $1', [customer?.id]);
    expect(rows).toEqual([{ name: 'Changed through findManaged' }]);
  });

  it('sends its statements prepared, on the transaction when there is one', async () => {
    // when invoices are read by one id and by a list of ids, twice each, inside a transaction
    const missing = randomUUID();
    const statements = await inEnv(async (tx) => {
      for (let i = 0; i < 2; i++) {
        expect(await leanFind(tx, InvoiceSchema, { id: [invoiceId] })).toHaveLength(1);
        expect(await leanFind(tx, InvoiceSchema, { id: [invoiceId, missing] })).toHaveLength(1);
      }
      return tx.execute<{ statement: string }[]>('select statement from pg_prepared_statements');
    });

    // then the connection holds each statement, prepared once: equality for one id, = any for a list
    const texts = statements.map((row) => row.statement);
    expect(texts.filter((text) => /from "invoice" where "id" = \$1$/.test(text))).toHaveLength(1);
    expect(texts.filter((text) => /from "invoice" where "id" = any\(\$1\)$/.test(text))).toHaveLength(1);
  });

  it('lets the EntityManager apply its session context (row-level security variables)', async () => {
    // given an EntityManager with the environment as its session context, outside any transaction
    const em = t.orm.em.fork();
    em.setSessionContext({ variables: { [ENVIRONMENT_SETTING]: env.id } });

    // when it reads
    const sent: string[] = [];
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const [config] = args;
      sent.push(typeof config === 'string' ? config : String((config as { text?: string }).text));
      return Reflect.apply(query, this, args);
    } as typeof query;
    const [invoice] = await leanFind(em, InvoiceSchema, { id: invoiceId }).finally(() => {
      pg.Client.prototype.query = query;
    });

    // then the EntityManager set the variable in a transaction around the read, which found the row
    expect(sent.some((text) => text.includes('set_config') && text.includes(ENVIRONMENT_SETTING))).toBe(true);
    expect(invoice?.id).toBe(invoiceId);
  });

  it('answers an empty list with no rows, and its rows cannot be changed by mistake', async () => {
    expect(await inEnv((em) => leanFind(em, InvoiceSchema, { id: [] }))).toEqual([]);

    const [invoice] = await inEnv((em) => leanFind(em, InvoiceSchema, { id: invoiceId }));
    expect(() => Object.assign(invoice as object, { memo: 'changed' })).toThrow(TypeError);
  });
});
