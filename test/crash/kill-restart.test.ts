import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTaxCode, gql } from '../support/catalog.ts';
import { setupTestApp, type TestEnvironment } from '../support/harness.ts';
import { type ServerProcess, startServer, stopServer } from '../support/server-process.ts';

/**
 * A real server process over this file's database, SIGKILLed in the middle of a concurrent stream of
 * invoice creations (REST) and bookings (GraphQL), each sent with its own Idempotency-Key. A second
 * process then takes over: every request that got no answer is retried with its key, the rest of the
 * stream follows, and the database must look as if nothing had happened.
 */
const t = setupTestApp();

const INVOICES = 120;
/** Every other invoice is booked once created. */
const books = (index: number) => index % 2 === 0;
const BOOKINGS = INVOICES / 2;
/** Requests in flight at any time. */
const CONCURRENCY = 16;
/** The first process is killed when this many answers have arrived, with CONCURRENCY requests outstanding. */
const KILL_AFTER_ANSWERS = 50;
const REQUEST_TIMEOUT_MS = 30_000;

const BOOK = `mutation ($id: UUID!) {
  invoiceBook(id: $id) { invoice { id handle status } userErrors { code message } }
}`;

/** Invoice `index`: one to three lines, exact decimals, some taxed, some discounted, some negative. */
function invoiceBody(index: number, customerId: string) {
  const items = Array.from({ length: 1 + (index % 3) }, (_, line) => ({
    title: `Line ${line + 1}`,
    quantity: 1 + ((index + line) % 7) + (line % 2) * 0.5,
    unitAmount: (line === 2 ? -1 : 1) * (100 + index * 13 + 0.25 * line),
    taxCode: (index + line) % 2 === 0 ? 'VAT25' : null,
    discount: line === 1 ? { percentage: 7.5, amount: 3 } : null,
  }));
  return { customerId, currency: 'EUR', date: '2026-04-01', memo: `crash #${index}`, items };
}

type Task = { index: number; invoiceId?: string; handle?: string };
type Answer = { status: number; body: any; replayed: boolean };

type Stream = {
  url: string;
  /** Called with every answer, as soon as its body has arrived. */
  onAnswer: () => void;
  answered: number;
  /** The keys of requests that got no answer, and why. */
  unanswered: { key: string; reason: string }[];
  /** The keys whose answer was a replay of an earlier, committed request. */
  replayed: string[];
};

describe('killing the server in the middle of a stream of invoice creations and bookings', () => {
  let env: TestEnvironment;
  let customerId: string;

  beforeAll(async () => {
    env = await t.createEnvironment('Crash');
    await createTaxCode(t, env, { code: 'VAT25', rate: 25 });
    const data = await gql(
      t,
      env,
      'mutation { customerCreate(input: { name: "Crash Ltd", currency: "EUR" }) { customer { id } } }',
    );
    customerId = data.customerCreate.customer.id;
  });

  /**
   * Sends one request under `key`; undefined when no answer arrived. A 409 because the same key is
   * still running (the killed process's transaction, until PostgreSQL notices) is retried as the
   * README tells clients to.
   */
  async function send(stream: Stream, path: string, key: string, body: unknown): Promise<Answer | undefined> {
    for (let attempt = 0; ; attempt++) {
      let answer: Answer;
      try {
        const response = await fetch(`${stream.url}${path}`, {
          method: 'POST',
          headers: { ...env.headers, 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        answer = {
          status: response.status,
          body: await response.json(),
          replayed: response.headers.get('idempotent-replayed') === 'true',
        };
      } catch (error) {
        stream.unanswered.push({ key, reason: (error as Error).message });
        return undefined;
      }
      stream.answered++;
      if (answer.replayed) stream.replayed.push(key);
      stream.onAnswer();
      const code = answer.body?.code ?? answer.body?.errors?.[0]?.extensions?.code;
      if (code !== 'IDEMPOTENCY_IN_FLIGHT' || attempt >= 50) return answer;
      await sleep(100);
    }
  }

  /** Sends what `task` still lacks an answer for; false when a request went unanswered. */
  async function advance(stream: Stream, task: Task): Promise<boolean> {
    if (!task.invoiceId) {
      const created = await send(
        stream,
        '/invoices',
        `create-${task.index}`,
        invoiceBody(task.index, customerId),
      );
      if (!created) return false;
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      task.invoiceId = created.body.id;
    }
    if (books(task.index) && !task.handle) {
      const booked = await send(stream, '/graphql', `book-${task.index}`, {
        query: BOOK,
        variables: { id: task.invoiceId },
      });
      if (!booked) return false;
      expect(booked.body.errors, JSON.stringify(booked.body)).toBeUndefined();
      expect(booked.body.data.invoiceBook.userErrors).toEqual([]);
      expect(booked.body.data.invoiceBook.invoice.id).toBe(task.invoiceId);
      task.handle = booked.body.data.invoiceBook.invoice.handle;
    }
    return true;
  }

  /** CONCURRENCY workers take tasks in order; each stops at its first request without an answer. */
  async function run(stream: Stream, tasks: Task[]): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < tasks.length) {
        if (!(await advance(stream, tasks[next++] as Task))) return;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  }

  const serverEnv = () => ({ DATABASE_URL: t.databaseUrl, RATE_LIMIT_REQUESTS: '0' });

  it('loses no invoice, duplicates none, keeps every total exact and the numbering gapless', async () => {
    const tasks: Task[] = Array.from({ length: INVOICES }, (_, index) => ({ index }));

    // given a server taking a concurrent stream, SIGKILLed once KILL_AFTER_ANSWERS answers have arrived
    const first: ServerProcess = await startServer(serverEnv());
    let killed: Promise<number | null> | undefined;
    const before: Stream = {
      url: first.url,
      answered: 0,
      unanswered: [],
      replayed: [],
      onAnswer: () => {
        if (before.answered >= KILL_AFTER_ANSWERS) killed ??= stopServer(first, 'SIGKILL');
      },
    };
    try {
      await run(before, tasks);
    } finally {
      killed ??= stopServer(first, 'SIGKILL');
      await killed;
    }
    expect(before.answered).toBeGreaterThanOrEqual(KILL_AFTER_ANSWERS);
    expect(before.unanswered.length, 'requests cut off by the kill').toBeGreaterThanOrEqual(CONCURRENCY / 2);

    // when a new process takes over and every unanswered request is retried with its key, then the rest
    const second = await startServer(serverEnv());
    const after: Stream = { url: second.url, answered: 0, unanswered: [], replayed: [], onAnswer: () => {} };
    try {
      await run(after, tasks);
    } finally {
      await stopServer(second);
    }
    expect(after.unanswered).toEqual([]);
    // Only a request cut off by the kill can have committed unseen, and its retry replays the answer.
    const cutOff = before.unanswered.map((request) => request.key);
    expect(after.replayed.filter((key) => !cutOff.includes(key))).toEqual([]);

    // then each logical creation made exactly one invoice, with all its lines, the one its answer named
    const invoices = await t.sql<{ id: string; memo: string; handle: string | null; lines: number }>(
      `select i.id, i.memo, i.handle, (select count(*)::int from invoice_item l where l.invoice_id = i.id) as lines
       from invoice i where i.environment_id = $1`,
      [env.id],
    );
    expect(invoices).toHaveLength(INVOICES);
    const byMemo = new Map(invoices.map((invoice) => [invoice.memo, invoice]));
    for (const task of tasks) {
      const stored = byMemo.get(`crash #${task.index}`);
      expect(stored, `invoice ${task.index}`).toMatchObject({
        id: task.invoiceId,
        lines: 1 + (task.index % 3),
      });
      expect(stored?.handle ?? undefined).toBe(task.handle);
    }

    // and every invoice's totals are the sums of its lines
    const wrongTotals = await t.sql(
      `select i.id from invoice i
       left join (select invoice_id, sum(amount) as net, sum(tax_amount) as vat from invoice_item group by invoice_id) l
         on l.invoice_id = i.id
       where i.environment_id = $1 and (i.total_excl_vat <> coalesce(l.net, 0) or i.total_vat <> coalesce(l.vat, 0)
         or i.total_incl_vat <> coalesce(l.net, 0) + coalesce(l.vat, 0))`,
      [env.id],
    );
    expect(wrongTotals).toEqual([]);

    // and the booked numbers run from 1 to the number of bookings, without a gap or a duplicate
    const handles = invoices.flatMap((invoice) => (invoice.handle ? [invoice.handle] : [])).sort();
    const expected = Array.from({ length: BOOKINGS }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`);
    expect(handles).toEqual(expected);
    expect(
      await t.sql('select last_number::int from invoice_numbering where environment_id = $1', [env.id]),
    ).toEqual([{ last_number: BOOKINGS }]);
    expect(second.output()).not.toMatch(/uncaught|unhandled/i);
  }, 180_000);
});
