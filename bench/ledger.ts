/*
 * Ledger posting and revenue recognition: `node bench/ledger.ts [invoices] [linesPerInvoice]`
 * (default 1,000 × 10 = 10,000 booked lines). Starts its own embedded PostgreSQL in a temporary
 * directory, makes the default account set recognize evenly (so every line with a 12-month service
 * period is deferred and gets 12 schedule rows), books the invoices through GraphQL (each booking
 * posts its journal entry and writes its schedule in the same transaction), then times a recognition
 * run (as the daily job runs it, batch by batch) that posts the first month of every line, a rerun, and the run of the other eleven months.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { createApp } from '../src/app.ts';
import { AccessService } from '../src/auth/access.service.ts';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate, openOrm } from '../src/db/orm.ts';
import { inEnvironment } from '../src/db/tenant-transaction.ts';
import { runRecognition } from '../src/modules/ledger/ledger-recognition.jobs.ts';
import { entities } from '../src/modules/registry.ts';

const invoices = Number(process.argv[2] ?? 1000);
const linesPerInvoice = Number(process.argv[3] ?? 10);
const dataDir = await mkdtemp(path.join(tmpdir(), 'ledger-bench-'));
await chmod(dataDir, 0o755);
const database = await startEmbeddedDatabase(dataDir);
const owner = await openOrm(database.url, { entities, poolMax: 1, owner: true });
const orm = await openOrm(database.url, { entities, poolMax: 10 });
const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;
try {
  await migrate(owner);
  const access = new AccessService(owner.em.fork());
  const environment = await access.createEnvironment('Bench');
  const { secret } = await access.createToken([environment.id]);
  const app = createApp({ orm, logger: pino({ level: 'silent' }) });
  const headers = {
    authorization: `Bearer ${secret}`,
    'x-environment': environment.id,
    'content-type': 'application/json',
  };
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are untyped JSON
  const call = async (pathName: string, body: unknown): Promise<any> => {
    const response = await app.fetch(`http://bench${pathName}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as { data?: unknown; errors?: unknown[] };
    if (response.status >= 300 || json.errors) throw new Error(JSON.stringify(json));
    return pathName === '/graphql' ? json.data : json;
  };
  const graphql = (query: string, variables: Record<string, unknown> = {}) =>
    call('/graphql', { query, variables });

  const settings =
    await graphql(`query { ledgerSettings { defaultAccountSet { salesAccount { id } incomeAccount { id }
    taxAccount { id } deferralAccount { id } } } }`);
  const set = settings.ledgerSettings.defaultAccountSet;
  const created = await graphql(
    `mutation ($input: AccountSetCreateInput!) { accountSetCreate(input: $input) { accountSet { id } } }`,
    {
      input: {
        salesAccountId: set.salesAccount.id,
        incomeAccountId: set.incomeAccount.id,
        taxAccountId: set.taxAccount.id,
        deferralAccountId: set.deferralAccount.id,
        recognitionStrategy: 'even_distribution',
      },
    },
  );
  await graphql(
    `mutation ($id: UUID!) { ledgerSettingsUpdate(input: { defaultAccountSetId: $id }) { userErrors { message } } }`,
    {
      id: created.accountSetCreate.accountSet.id,
    },
  );
  const customer = await graphql(
    'mutation { customerCreate(input: { name: "Customer", currency: "EUR" }) { customer { id } } }',
  );
  const customerId = customer.customerCreate.customer.id;
  const items = Array.from({ length: linesPerInvoice }, (_, n) => ({
    quantity: 1,
    unitAmount: 120000 + n,
    title: `Annual plan ${n}`,
    periodStart: '2026-01-15',
    periodEnd: '2027-01-15',
  }));
  const drafts: string[] = [];
  for (let n = 0; n < invoices; n += 1) {
    drafts.push((await call('/invoices', { customerId, currency: 'EUR', date: '2026-01-15', items })).id);
  }
  const booking = process.hrtime.bigint();
  for (const id of drafts) {
    const data = await graphql('mutation ($id: UUID!) { invoiceBook(id: $id) { userErrors { message } } }', {
      id,
    });
    if (data.invoiceBook.userErrors.length > 0) throw new Error(JSON.stringify(data.invoiceBook.userErrors));
  }
  const bookingSeconds = seconds(booking);
  // As the daily job runs it: batches of its own transactions (the GraphQL mutation runs inside one
  // request, under the request time limit).
  const run = async (upTo: string) => {
    const start = process.hrtime.bigint();
    const posted = await runRecognition(environment.id, upTo, (work) =>
      inEnvironment(orm.em.fork(), environment.id, work),
    );
    return { posted, seconds: seconds(start) };
  };
  const first = await run('2026-02-15');
  const rerun = await run('2026-02-15');
  const rest = await run('2027-02-01');
  const lines = invoices * linesPerInvoice;
  const report = [
    `${invoices} invoices × ${linesPerInvoice} lines = ${lines} booked lines (12-month even_distribution)`,
    `booking with posting and schedules: ${bookingSeconds.toFixed(1)} s (${((bookingSeconds / invoices) * 1000).toFixed(1)} ms per invoice, ${((bookingSeconds / lines) * 1000).toFixed(2)} ms per line)`,
    `recognition run, first month: ${first.posted} rows in ${first.seconds.toFixed(1)} s (${((first.seconds / Math.max(first.posted, 1)) * 1000).toFixed(2)} ms per row)`,
    `rerun of the same date: ${rerun.posted} rows in ${rerun.seconds.toFixed(2)} s`,
    `recognition run, the other eleven months: ${rest.posted} rows in ${rest.seconds.toFixed(1)} s`,
  ];
  process.stdout.write(`${report.join('\n')}\n`);
} finally {
  await orm.close();
  await owner.close();
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
