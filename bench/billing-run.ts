/*
 * How long a billing run takes per customer: `node bench/billing-run.ts [customers]` (default 500).
 * Starts its own embedded PostgreSQL in a temporary directory, creates that many customers through
 * GraphQL, each with a subscription of two monthly items (advance and arrears) started three months
 * before `asOf`, then times one run (5 periods and one booked invoice per customer) and a rerun.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { createApp } from '../src/app.ts';
import { AccessService } from '../src/auth/access.service.ts';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { migrate, openOrm } from '../src/db/orm.ts';
import { entities } from '../src/modules/registry.ts';
import { createdId, graphqlCaller } from './graphql-client.ts';

const customers = Number(process.argv[2] ?? 500);
const dataDir = await mkdtemp(path.join(tmpdir(), 'billing-bench-'));
await chmod(dataDir, 0o755);
const database = await startEmbeddedDatabase(dataDir);
// Migrating and creating the environment and its token take the owner; the app acts as the app role.
const owner = await openOrm(database.url, { entities, poolMax: 1, owner: true });
const orm = await openOrm(database.url, { entities, poolMax: 10 });
try {
  await migrate(owner);
  const access = new AccessService(owner.em.fork());
  const environment = await access.createEnvironment('Bench');
  const { secret } = await access.createToken([environment.id]);
  const app = createApp({ orm, logger: pino({ level: 'silent' }) });
  const graphql = graphqlCaller(app, environment.id, secret);
  const product = createdId(
    await graphql(
      'mutation { productCreate(input: { name: "Seats", handle: "seats" }) { product { id } } }',
      {},
    ),
    'productCreate',
    'product',
  );
  const price = async (method: string) =>
    createdId(
      await graphql(
        `mutation ($method: BillingMethod!) { priceCreate(input: { name: "Seat", termUnit: month, termCount: 1,
          purchase: recurring, priceModel: fee, method: $method, pricing: { eur: { amount: 1000 } } }) { price { id } } }`,
        { method },
      ),
      'priceCreate',
      'price',
    );
  const [advance, arrears] = [await price('advance'), await price('arrears')];
  for (let n = 0; n < customers; n += 1) {
    const customerId = createdId(
      await graphql(
        'mutation { customerCreate(input: { name: "Customer", currency: "EUR" }) { customer { id } } }',
        {},
      ),
      'customerCreate',
      'customer',
    );
    await graphql(
      `mutation ($input: SubscriptionCreateInput!) { subscriptionCreate(input: $input) { userErrors { message } } }`,
      {
        input: {
          customerId,
          term: { start: '2026-01-01' },
          items: [
            { productId: product, priceId: advance, quantity: 3 },
            { productId: product, priceId: arrears, quantity: 2 },
          ],
        },
      },
    );
  }

  const run = async () => {
    const started = process.hrtime.bigint();
    const data = await graphql(
      'mutation { billingRunCreate(asOf: "2026-03-01T00:00:00Z") { billingRun { invoiceCount periodCount } } }',
      {},
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return { seconds, ...data.billingRunCreate?.billingRun };
  };
  const first = await run();
  const rerun = await run();
  console.log(
    JSON.stringify({
      customers,
      run: { ...first, msPerCustomer: Number(((first.seconds * 1000) / customers).toFixed(2)) },
      rerun,
    }),
  );
} finally {
  await orm.close();
  await owner.close();
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
